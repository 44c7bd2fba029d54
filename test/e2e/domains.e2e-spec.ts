import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import {
  closedUdpPort,
  startDnsServer,
  startSilentUdpPort,
  type TestDnsServer,
} from '../support/dns-server.js';
import type { TestUser } from '../support/factories.js';
import { ISO, UUID, NOT_FOUND, INSUFFICIENT, expectScopeEnforced } from '../support/expectations.js';
import { margin } from '../support/shared-machine.js';

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const DOMAIN_FIELDS = [
  'domain',
  'has_saml',
  'has_scim',
  'id',
  'is_verified',
  'jit_provisioning_enabled',
  'saml_acs_url',
  'saml_entity_id',
  'saml_x509_cert',
  'scim_base_url',
  'scim_bearer_token',
  'scim_enabled',
  'sso_enforcement',
  'verification_challenge',
  'verified_at',
];
/** A real self-signed certificate (openssl req -x509), PEM. */
const CERT = readFileSync(new URL('../fixtures/saml-idp-cert.pem', import.meta.url), 'utf8').trim();
const SAML = {
  saml_entity_id: 'https://idp.example.com/metadata',
  saml_acs_url: 'https://app.example.com/complete/saml/',
  saml_x509_cert: CERT,
};

interface Domain {
  id: string;
  domain: string;
  is_verified: boolean;
  verified_at: string | null;
  verification_challenge: string;
  jit_provisioning_enabled: boolean;
  sso_enforcement: string;
  has_saml: boolean;
  saml_entity_id: string | null;
  saml_acs_url: string | null;
  saml_x509_cert: string | null;
  has_scim: boolean;
  scim_enabled: boolean;
  scim_base_url: string | null;
  scim_bearer_token: string | null;
}

let sequence = 0;
/** A domain name no other test uses. */
const uniqueDomain = (label = 'acme') => `${label}-${++sequence}-${process.pid}.example.com`;
const challengeName = (domain: string) => `_posthog-challenge.${domain}`;

describe('domains', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let orgId: string;
  let otherOrgId: string;

  const path = (organizationId = orgId, rest = '') => `/api/organizations/${organizationId}/domains${rest}`;

  /** Creates a domain through the API as `who` (owner by default). */
  const create = async (body: Record<string, unknown>, who: TestUser = owner, organizationId = orgId) =>
    (await t.http.post(path(organizationId)).set(who.auth).send(body).expect(201)).body as Domain;

  /** Publishes the challenge in DNS and verifies through the API. */
  const verifyThroughDns = async (domain: Domain, organizationId = orgId): Promise<Domain> => {
    dns.setTxt(challengeName(domain.domain), [domain.verification_challenge]);
    const res = await t.http
      .post(path(organizationId, `/${domain.id}/verify`))
      .set(owner.auth)
      .expect(200);
    expect(res.body.is_verified).toBe(true);
    return res.body as Domain;
  };

  const domainCount = async (): Promise<number> =>
    (await t.dataSource.query('SELECT count(*)::int AS n FROM organization_domains'))[0].n;

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({ DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: '500', MAX_PAGE_LIMIT: '50' });
    owner = await t.factories.user();
    admin = await t.factories.user();
    member = await t.factories.user();
    stranger = await t.factories.user();
    orgId = (await t.factories.organization(owner, 'Domains')).id;
    otherOrgId = (await t.factories.organization(stranger, 'Elsewhere')).id;
    await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
  });
  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  describe('create', () => {
    it('returns the Domain field by field: unverified, a fresh challenge, default settings', async () => {
      const name = uniqueDomain();
      const res = await t.http.post(path()).set(admin.auth).send({ domain: name }).expect(201);
      const domain = res.body as Domain;
      expect(Object.keys(domain).sort()).toEqual(DOMAIN_FIELDS);
      expect(domain.id).toMatch(UUID);
      expect(domain).toEqual({
        id: domain.id,
        domain: name,
        is_verified: false,
        verified_at: null,
        verification_challenge: expect.stringMatching(CHALLENGE),
        jit_provisioning_enabled: false,
        sso_enforcement: '',
        has_saml: false,
        saml_entity_id: null,
        saml_acs_url: null,
        saml_x509_cert: null,
        has_scim: false,
        scim_enabled: false,
        scim_base_url: null,
        scim_bearer_token: null,
      });
      const rows = await t.dataSource.query(
        'SELECT organization_id, domain, verification_challenge FROM organization_domains WHERE id = $1',
        [domain.id],
      );
      expect(rows).toEqual([
        { organization_id: orgId, domain: name, verification_challenge: domain.verification_challenge },
      ]);
    });

    it('makes a different random challenge for every domain', async () => {
      const challenges = new Set<string>();
      for (let i = 0; i < 5; i++)
        challenges.add((await create({ domain: uniqueDomain() })).verification_challenge);
      expect(challenges.size).toBe(5);
    });

    it("trims the domain, and refuses upper case as PostHog's pattern does", async () => {
      const name = uniqueDomain('mixed');
      const domain = await create({ domain: `  ${name}\n` });
      expect(domain.domain).toBe(name);
      const upper = await t.http
        .post(path())
        .set(admin.auth)
        .send({ domain: uniqueDomain('Mixed') })
        .expect(400);
      expect(upper.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Enter a valid domain name, such as example.com.',
        attr: 'domain',
      });
    });

    it('refuses scim_enabled: true on an unverified domain (at creation and by PATCH) and takes false', async () => {
      const res = await t.http
        .post(path())
        .set(admin.auth)
        .send({ domain: uniqueDomain(), scim_enabled: true })
        .expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'verification_required',
        detail: 'Verify the domain before enabling SCIM provisioning.',
        attr: 'scim_enabled',
      });
      const domain = await create({ domain: uniqueDomain(), scim_enabled: false });
      expect(domain).toMatchObject({ has_scim: false, scim_enabled: false, scim_base_url: null });
      const patched = await t.http
        .patch(path(orgId, `/${domain.id}`))
        .set(admin.auth)
        .send({ scim_enabled: true })
        .expect(400);
      expect(patched.body).toMatchObject({ code: 'verification_required', attr: 'scim_enabled' });
      const enabled = await t.http
        .post(path(orgId, `/${domain.id}/scim`))
        .set(admin.auth)
        .expect(400);
      expect(enabled.body).toMatchObject({ code: 'verification_required', attr: 'scim_enabled' });
    });

    it('turns SCIM on by PATCH on a verified domain: the token once, has_scim and scim_base_url after', async () => {
      const domain = await verifyThroughDns(await create({ domain: uniqueDomain() }));
      const on = await t.http
        .patch(path(orgId, `/${domain.id}`))
        .set(admin.auth)
        .send({ scim_enabled: true })
        .expect(200);
      expect(on.body).toMatchObject({
        has_scim: true,
        scim_enabled: true,
        scim_base_url: expect.stringMatching(new RegExp(`/scim/v2/${domain.id}$`)),
        scim_bearer_token: expect.stringMatching(/^phscim_[0-9A-Za-z]{43}$/),
      });
      const [row] = await t.dataSource.query(
        'SELECT scim_bearer_token_hash FROM organization_domains WHERE id = $1',
        [domain.id],
      );
      expect(row.scim_bearer_token_hash).toBe(
        createHash('sha256').update(on.body.scim_bearer_token).digest('hex'),
      );
      const read = await t.http
        .get(path(orgId, `/${domain.id}`))
        .set(member.auth)
        .expect(200);
      expect(read.body).toMatchObject({ has_scim: true, scim_enabled: true, scim_bearer_token: null });
      const off = await t.http
        .patch(path(orgId, `/${domain.id}`))
        .set(admin.auth)
        .send({ scim_enabled: false })
        .expect(200);
      expect(off.body).toMatchObject({ has_scim: false, scim_enabled: false, scim_base_url: null });
    });

    it('takes the SAML settings at creation and computes has_saml; jit false and sso "" are no change', async () => {
      const domain = await create({
        domain: uniqueDomain(),
        ...SAML,
        jit_provisioning_enabled: false,
        sso_enforcement: '',
      });
      expect(domain).toMatchObject({ ...SAML, has_saml: true, is_verified: false, sso_enforcement: '' });
      const partial = await create({ domain: uniqueDomain(), saml_entity_id: 'idp', saml_acs_url: null });
      expect(partial).toMatchObject({ saml_entity_id: 'idp', saml_acs_url: null, has_saml: false });
    });

    it.each([
      [{}, 'required', 'domain'],
      [{ domain: null }, 'invalid_input', 'domain'],
      [{ domain: 42 }, 'invalid_input', 'domain'],
      [{ domain: '' }, 'invalid_input', 'domain'],
      [{ domain: 'localhost' }, 'invalid_input', 'domain'],
      [{ domain: 'exa_mple.com' }, 'invalid_input', 'domain'],
      [{ domain: 'example.com.' }, 'invalid_input', 'domain'],
      [{ domain: '-example.com' }, 'invalid_input', 'domain'],
      [{ domain: 'exa--mple.com' }, 'invalid_input', 'domain'],
      [{ domain: 'example.c0m' }, 'invalid_input', 'domain'],
      [{ domain: 'https://example.com' }, 'invalid_input', 'domain'],
      [{ domain: 'bücher.example' }, 'invalid_input', 'domain'],
      [{ domain: `${'a'.repeat(64)}.com` }, 'invalid_input', 'domain'],
      [
        { domain: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com` },
        'max_length',
        'domain',
      ],
      [
        { domain: 'ok.example.com', jit_provisioning_enabled: true },
        'verification_required',
        'jit_provisioning_enabled',
      ],
      [{ domain: 'ok.example.com', sso_enforcement: 'github' }, 'verification_required', 'sso_enforcement'],
      [
        { domain: 'ok.example.com', ...SAML, sso_enforcement: 'saml' },
        'verification_required',
        'sso_enforcement',
      ],
      [
        { domain: 'ok.example.com', jit_provisioning_enabled: 'yes' },
        'invalid_input',
        'jit_provisioning_enabled',
      ],
      [
        { domain: 'ok.example.com', jit_provisioning_enabled: null },
        'invalid_input',
        'jit_provisioning_enabled',
      ],
      [{ domain: 'ok.example.com', sso_enforcement: 'okta' }, 'invalid_input', 'sso_enforcement'],
      [{ domain: 'ok.example.com', sso_enforcement: 'SAML' }, 'invalid_input', 'sso_enforcement'],
      [{ domain: 'ok.example.com', sso_enforcement: null }, 'invalid_input', 'sso_enforcement'],
      [
        { domain: 'ok.example.com', saml_acs_url: 'http://idp.example.com/acs' },
        'invalid_input',
        'saml_acs_url',
      ],
      [{ domain: 'ok.example.com', saml_acs_url: 'idp.example.com/acs' }, 'invalid_input', 'saml_acs_url'],
      [{ domain: 'ok.example.com', saml_acs_url: 7 }, 'invalid_input', 'saml_acs_url'],
      [{ domain: 'ok.example.com', saml_x509_cert: 'not a certificate' }, 'invalid_input', 'saml_x509_cert'],
      [
        { domain: 'ok.example.com', saml_x509_cert: CERT.replace('MII', 'MIJ') },
        'invalid_input',
        'saml_x509_cert',
      ],
      [{ domain: 'ok.example.com', saml_entity_id: 'x'.repeat(513) }, 'max_length', 'saml_entity_id'],
      [{ domain: 'ok.example.com', scim_enabled: 'yes' }, 'invalid_input', 'scim_enabled'],
      [{ domain: 'ok.example.com', colour: 'red' }, 'unknown_field', 'colour'],
    ])('rejects %j with 400 %s on %s and stores nothing', async (body, code, attr) => {
      const before = await domainCount();
      const res = await t.http.post(path()).set(owner.auth).send(body).expect(400);
      expect(res.body).toEqual({ type: 'validation_error', code, attr, detail: expect.any(String) });
      expect(await domainCount()).toBe(before);
    });

    it('explains each kind of bad value in a sentence', async () => {
      const bad = async (body: Record<string, unknown>) =>
        (
          await t.http
            .post(path())
            .set(owner.auth)
            .send({ domain: 'ok.example.com', ...body })
            .expect(400)
        ).body;
      expect(await bad({ domain: 'nope' })).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Enter a valid domain name, such as example.com.',
        attr: 'domain',
      });
      expect((await bad({ jit_provisioning_enabled: true })).detail).toBe(
        'Verify the domain before changing just-in-time provisioning.',
      );
      expect((await bad({ sso_enforcement: 'okta' })).detail).toBe(
        'Must be one of "", "google-oauth2", "github", "gitlab", "saml".',
      );
      expect((await bad({ saml_acs_url: 'http://x.example.com' })).detail).toBe('Enter a valid https URL.');
      expect((await bad({ saml_x509_cert: 'x' })).detail).toBe('Enter a PEM-encoded X.509 certificate.');
    });

    it('keeps a domain to one organization: 400 unique on the domain', async () => {
      const name = uniqueDomain('taken');
      await create({ domain: name });
      const elsewhere = await t.http
        .post(path(otherOrgId))
        .set(stranger.auth)
        .send({ domain: name })
        .expect(400);
      expect(elsewhere.body).toEqual({
        type: 'validation_error',
        code: 'unique',
        detail: 'This domain is already registered.',
        attr: 'domain',
      });
      const again = await t.http.post(path()).set(owner.auth).send({ domain: name }).expect(400);
      expect(again.body.code).toBe('unique');
      const rows = await t.dataSource.query(
        'SELECT organization_id FROM organization_domains WHERE domain = $1',
        [name],
      );
      expect(rows).toEqual([{ organization_id: orgId }]);
    });

    it('lets exactly one of concurrent creates of the same domain win (unique index, not a pre-check)', async () => {
      const name = uniqueDomain('race');
      const orgs = [orgId, otherOrgId, orgId, otherOrgId, orgId, otherOrgId];
      const results = await Promise.all(
        orgs.map((o) =>
          t.http
            .post(path(o))
            .set((o === orgId ? owner : stranger).auth)
            .send({ domain: name }),
        ),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 400, 400, 400, 400, 400]);
      for (const r of results.filter((x) => x.status === 400)) expect(r.body.code).toBe('unique');
      const rows = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM organization_domains WHERE domain = $1',
        [name],
      );
      expect(rows[0].n).toBe(1);
    });

    it('needs admin or above: members get 403, strangers 404', async () => {
      const name = uniqueDomain();
      const denied = await t.http.post(path()).set(member.auth).send({ domain: name }).expect(403);
      expect(denied.body).toEqual(INSUFFICIENT);
      const hidden = await t.http.post(path()).set(stranger.auth).send({ domain: name }).expect(404);
      expect(hidden.body).toEqual(NOT_FOUND);
      await t.http.post(path('not-a-uuid')).set(owner.auth).send({ domain: name }).expect(404);
      await t.http
        .post(path('3f1a2b4c-0000-4000-8000-000000000000'))
        .set(owner.auth)
        .send({ domain: name })
        .expect(404);
      const rows = await t.dataSource.query('SELECT 1 FROM organization_domains WHERE domain = $1', [name]);
      expect(rows).toEqual([]);
    });

    it('needs organization:write (401 without a key, 403 for another organization of a restricted key)', async () => {
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      await expectScopeEnforced(
        (h) => t.http.post(path()).set(h).send({ domain: uniqueDomain() }),
        'organization:write',
        readOnly,
      );
      const restricted = await t.factories.keyFor(owner, '*', { organizations: [otherOrgId] });
      const outside = await t.http.post(path()).set(restricted).send({ domain: uniqueDomain() }).expect(403);
      expect(outside.body.code).toBe('permission_denied');
      await t.http.post(`${path()}/`).set(owner.auth).send({ domain: uniqueDomain() }).expect(201);
    });
  });

  describe('list', () => {
    let listOrg: string;
    let domains: Domain[];

    beforeAll(async () => {
      listOrg = (await t.factories.organization(owner, 'Listed')).id;
      await t.factories.member(listOrg, member, MembershipLevel.MEMBER);
      domains = [];
      for (const name of [
        'm.example.com',
        'b.example.org',
        'zz.example.net',
        'a.example.com',
        'b.example.com',
      ])
        domains.push(
          await create({ domain: `${name.split('.')[0]}-${process.pid}.${name}` }, owner, listOrg),
        );
      // Another organization's domains never show.
      await create({ domain: uniqueDomain('foreign') }, stranger, otherOrgId);
    });

    const byDomain = () => [...domains].sort((a, b) => (a.domain < b.domain ? -1 : 1));

    it('returns the envelope of the organization’s domains ordered by domain, to any member', async () => {
      const res = await t.http.get(path(listOrg)).set(member.auth).expect(200);
      expect(res.body).toEqual({ count: 5, next: null, previous: null, results: byDomain() });
      expect(Object.keys(res.body.results[0]).sort()).toEqual(DOMAIN_FIELDS);
    });

    it('pages with absolute links that keep other query parameters', async () => {
      const sorted = byDomain().map((d) => d.id);
      const first = await t.http
        .get(`${path(listOrg)}/?limit=2&utm=x`)
        .set(member.auth)
        .expect(200);
      expect(first.body.count).toBe(5);
      expect(first.body.results.map((d: Domain) => d.id)).toEqual(sorted.slice(0, 2));
      expect(first.body.previous).toBeNull();
      const next = new URL(first.body.next);
      expect(next.pathname).toBe(`${path(listOrg)}/`);
      expect(Object.fromEntries(next.searchParams)).toEqual({ limit: '2', offset: '2', utm: 'x' });
      const second = await t.http.get(`${next.pathname}${next.search}`).set(member.auth).expect(200);
      expect(second.body.results.map((d: Domain) => d.id)).toEqual(sorted.slice(2, 4));
      expect(Object.fromEntries(new URL(second.body.previous).searchParams)).toEqual({
        limit: '2',
        offset: '0',
        utm: 'x',
      });
      const last = await t.http
        .get(`${path(listOrg)}?limit=2&offset=4`)
        .set(member.auth)
        .expect(200);
      expect(last.body.results.map((d: Domain) => d.id)).toEqual(sorted.slice(4));
      expect(last.body.next).toBeNull();
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=51', 'limit'],
      ['offset=-1', 'offset'],
    ])('rejects %s with 400 naming %s', async (query, attr) => {
      const res = await t.http
        .get(`${path(listOrg)}?${query}`)
        .set(member.auth)
        .expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr });
    });

    it('is an empty envelope for an organization without domains', async () => {
      const empty = (await t.factories.organization(owner, 'Empty')).id;
      const res = await t.http.get(path(empty)).set(owner.auth).expect(200);
      expect(res.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    });

    it('answers 404 to strangers and for a malformed organization id', async () => {
      expect((await t.http.get(path(listOrg)).set(stranger.auth).expect(404)).body).toEqual(NOT_FOUND);
      expect((await t.http.get(path('nope')).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
    });

    it('needs organization:read (write grants it)', async () => {
      const projectOnly = await t.factories.keyFor(member, 'project:read');
      const writeOnly = await t.factories.keyFor(member, 'organization:write');
      const res = await expectScopeEnforced(
        (h) => t.http.get(path(listOrg)).set(h),
        'organization:read',
        projectOnly,
        {
          headers: writeOnly,
          status: 200,
        },
      );
      expect(res?.body.count).toBe(5);
    });
  });

  describe('retrieve', () => {
    it('returns the same Domain to any member', async () => {
      const domain = await create({ domain: uniqueDomain(), ...SAML });
      const res = await t.http
        .get(path(orgId, `/${domain.id}`))
        .set(member.auth)
        .expect(200);
      expect(res.body).toEqual(domain);
      await t.http
        .get(path(orgId, `/${domain.id}/`))
        .set(admin.auth)
        .expect(200);
    });

    it('answers 404 for another organization’s domain through our path, a malformed or missing id, and strangers', async () => {
      const foreign = await create({ domain: uniqueDomain('foreign') }, stranger, otherOrgId);
      const mine = await create({ domain: uniqueDomain() });
      for (const url of [
        path(orgId, `/${foreign.id}`),
        path(orgId, '/not-a-uuid'),
        path(orgId, '/3f1a2b4c-0000-4000-8000-000000000000'),
      ]) {
        expect((await t.http.get(url).set(owner.auth).expect(404)).body).toEqual(NOT_FOUND);
      }
      expect(
        (
          await t.http
            .get(path(orgId, `/${mine.id}`))
            .set(stranger.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      // The stranger's own organization path does not reach our domain either.
      await t.http
        .get(path(otherOrgId, `/${mine.id}`))
        .set(stranger.auth)
        .expect(404);
    });

    it('needs organization:read', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const projectOnly = await t.factories.keyFor(owner, 'project:read');
      await expectScopeEnforced(
        (h) => t.http.get(path(orgId, `/${domain.id}`)).set(h),
        'organization:read',
        projectOnly,
      );
    });
  });

  describe('update', () => {
    const patch = (domain: Domain, body: Record<string, unknown>, who: TestUser = owner) =>
      t.http
        .patch(path(orgId, `/${domain.id}`))
        .set(who.auth)
        .send(body);

    it('changes the SAML settings of an unverified domain and recomputes has_saml', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const res = await patch(
        domain,
        { saml_entity_id: ' idp ', saml_acs_url: SAML.saml_acs_url },
        admin,
      ).expect(200);
      expect(res.body).toEqual({
        ...domain,
        saml_entity_id: 'idp',
        saml_acs_url: SAML.saml_acs_url,
        has_saml: false,
      });
      const full = await patch(domain, { saml_x509_cert: `${CERT}\n` }).expect(200);
      expect(full.body).toMatchObject({ saml_x509_cert: CERT, has_saml: true });
      const cleared = await patch(domain, { saml_entity_id: null }).expect(200);
      expect(cleared.body).toMatchObject({ saml_entity_id: null, has_saml: false });
      expect(
        (
          await t.http
            .get(path(orgId, `/${domain.id}`))
            .set(member.auth)
            .expect(200)
        ).body,
      ).toEqual(cleared.body);
    });

    it('an empty body, or the current values, change nothing', async () => {
      const domain = await create({ domain: uniqueDomain() });
      expect((await patch(domain, {}).expect(200)).body).toEqual(domain);
      expect(
        (await patch(domain, { jit_provisioning_enabled: false, sso_enforcement: '' }).expect(200)).body,
      ).toEqual(domain);
    });

    it('refuses another domain (immutable, 400 read_only_field) and changes nothing', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const res = await patch(domain, { domain: uniqueDomain(), saml_entity_id: 'changed' }).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'read_only_field',
        detail: "Field 'domain' is read-only.",
        attr: 'domain',
      });
      expect(
        (
          await t.http
            .get(path(orgId, `/${domain.id}`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual(domain);
    });

    it('takes back the domain as read with a setting changed: read-only fields and the same domain are ignored', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const res = await patch(domain, {
        ...domain,
        saml_entity_id: 'changed',
        verification_challenge: 'x'.repeat(43),
        verified_at: new Date().toISOString(),
        is_verified: true,
        has_saml: true,
        has_scim: true,
        scim_bearer_token: 'x',
        id: '0b6f1c1e-6f0a-4a55-9d0e-3c5a0c8d2b11',
      }).expect(200);
      expect(res.body).toEqual({ ...domain, saml_entity_id: 'changed' });
    });

    it('PUT requires the (current) domain; settings left out keep their value', async () => {
      const domain = await create({ domain: uniqueDomain(), saml_entity_id: 'kept' });
      const put = (body: object, who = admin) =>
        t.http
          .put(path(orgId, `/${domain.id}/`))
          .set(who.auth)
          .send(body);
      expect((await put({ saml_acs_url: SAML.saml_acs_url }).expect(400)).body).toMatchObject({
        code: 'required',
        attr: 'domain',
      });
      expect((await put({ domain: uniqueDomain() }).expect(400)).body).toMatchObject({
        code: 'read_only_field',
        attr: 'domain',
      });
      const res = await put({ ...domain, saml_acs_url: SAML.saml_acs_url }).expect(200);
      expect(res.body).toEqual({ ...domain, saml_entity_id: 'kept', saml_acs_url: SAML.saml_acs_url });
      expect(
        (await put({ domain: domain.domain, jit_provisioning_enabled: true }).expect(400)).body.code,
      ).toBe('verification_required');
      expect((await put({ domain: domain.domain }, member).expect(403)).body).toEqual(INSUFFICIENT);
    });

    it.each([
      [{ jit_provisioning_enabled: null }, 'invalid_input', 'jit_provisioning_enabled'],
      [{ sso_enforcement: 'okta' }, 'invalid_input', 'sso_enforcement'],
      [{ saml_acs_url: 'ftp://idp.example.com' }, 'invalid_input', 'saml_acs_url'],
      [{ saml_x509_cert: CERT.split('\n').slice(1, -1).join('\n') }, 'invalid_input', 'saml_x509_cert'],
      [{ saml_x509_cert: `${CERT}\n${CERT}` }, 'invalid_input', 'saml_x509_cert'],
      [{ whatever: 1 }, 'unknown_field', 'whatever'],
    ])('rejects %j with 400 %s on %s', async (body, code, attr) => {
      const domain = await create({ domain: uniqueDomain() });
      const res = await patch(domain, body).expect(400);
      expect(res.body).toEqual({ type: 'validation_error', code, attr, detail: expect.any(String) });
    });

    it('refuses JIT provisioning and SSO enforcement on an unverified domain (verification_required)', async () => {
      const domain = await create({ domain: uniqueDomain(), ...SAML });
      expect((await patch(domain, { jit_provisioning_enabled: true }).expect(400)).body).toEqual({
        type: 'validation_error',
        code: 'verification_required',
        detail: 'Verify the domain before changing just-in-time provisioning.',
        attr: 'jit_provisioning_enabled',
      });
      for (const value of ['google-oauth2', 'github', 'gitlab', 'saml']) {
        expect((await patch(domain, { sso_enforcement: value }).expect(400)).body).toEqual({
          type: 'validation_error',
          code: 'verification_required',
          detail: 'Verify the domain before changing SSO enforcement.',
          attr: 'sso_enforcement',
        });
      }
      // Nothing of a refused body is applied.
      await patch(domain, { saml_entity_id: 'other', jit_provisioning_enabled: true }).expect(400);
      expect(
        (
          await t.http
            .get(path(orgId, `/${domain.id}`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual(domain);
    });

    it('on a verified domain allows JIT provisioning and SSO enforcement; "saml" needs has_saml', async () => {
      const domain = await verifyThroughDns(await create({ domain: uniqueDomain() }));
      const jit = await patch(domain, {
        jit_provisioning_enabled: true,
        sso_enforcement: 'google-oauth2',
      }).expect(200);
      expect(jit.body).toMatchObject({
        jit_provisioning_enabled: true,
        sso_enforcement: 'google-oauth2',
        is_verified: true,
      });

      const noSaml = await patch(domain, { sso_enforcement: 'saml', saml_entity_id: 'idp' }).expect(400);
      expect(noSaml.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'SAML enforcement needs saml_entity_id, saml_acs_url and saml_x509_cert to be set.',
        attr: 'sso_enforcement',
      });

      const saml = await patch(domain, { sso_enforcement: 'saml', ...SAML }).expect(200);
      expect(saml.body).toMatchObject({ sso_enforcement: 'saml', has_saml: true, ...SAML });

      // Clearing a SAML field under SAML enforcement is refused too.
      const clearing = await patch(domain, { saml_x509_cert: '' }).expect(400);
      expect(clearing.body).toMatchObject({ code: 'invalid_input', attr: 'sso_enforcement' });
      const both = await patch(domain, { sso_enforcement: '', saml_x509_cert: null }).expect(200);
      expect(both.body).toMatchObject({ sso_enforcement: '', saml_x509_cert: null, has_saml: false });

      for (const value of ['github', 'gitlab', '']) {
        expect((await patch(domain, { sso_enforcement: value }).expect(200)).body.sso_enforcement).toBe(
          value,
        );
      }
      expect(
        (await patch(domain, { jit_provisioning_enabled: false }).expect(200)).body.jit_provisioning_enabled,
      ).toBe(false);
    });

    it('needs admin or above: members 403; strangers and other organizations’ domains 404', async () => {
      const domain = await create({ domain: uniqueDomain() });
      expect((await patch(domain, { saml_entity_id: 'x' }, member).expect(403)).body).toEqual(INSUFFICIENT);
      expect((await patch(domain, { saml_entity_id: 'x' }, stranger).expect(404)).body).toEqual(NOT_FOUND);
      const foreign = await create({ domain: uniqueDomain('foreign') }, stranger, otherOrgId);
      await t.http
        .patch(path(orgId, `/${foreign.id}`))
        .set(owner.auth)
        .send({ saml_entity_id: 'x' })
        .expect(404);
      await t.http
        .patch(path(orgId, '/not-a-uuid'))
        .set(owner.auth)
        .send({ saml_entity_id: 'x' })
        .expect(404);
      expect(
        (
          await t.http
            .get(path(otherOrgId, `/${foreign.id}`))
            .set(stranger.auth)
            .expect(200)
        ).body,
      ).toEqual(foreign);
      expect(
        (
          await t.http
            .get(path(orgId, `/${domain.id}`))
            .set(owner.auth)
            .expect(200)
        ).body,
      ).toEqual(domain);
    });

    it('needs organization:write', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      await expectScopeEnforced(
        (h) =>
          t.http
            .patch(path(orgId, `/${domain.id}`))
            .set(h)
            .send({}),
        'organization:write',
        readOnly,
      );
    });
  });

  describe('delete', () => {
    it('lets an admin delete: 204 without a body, then 404; the name is free again', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const res = await t.http
        .delete(path(orgId, `/${domain.id}`))
        .set(admin.auth)
        .expect(204);
      expect(res.text).toBe('');
      await t.http
        .get(path(orgId, `/${domain.id}`))
        .set(owner.auth)
        .expect(404);
      await t.http
        .delete(path(orgId, `/${domain.id}`))
        .set(owner.auth)
        .expect(404);
      await create({ domain: domain.domain }, stranger, otherOrgId);
    });

    it('is refused to members (403), strangers and across organizations (404)', async () => {
      const domain = await create({ domain: uniqueDomain() });
      expect(
        (
          await t.http
            .delete(path(orgId, `/${domain.id}`))
            .set(member.auth)
            .expect(403)
        ).body,
      ).toEqual(INSUFFICIENT);
      expect(
        (
          await t.http
            .delete(path(orgId, `/${domain.id}`))
            .set(stranger.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      expect(
        (
          await t.http
            .delete(path(otherOrgId, `/${domain.id}`))
            .set(stranger.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      await t.http.delete(path(orgId, '/not-a-uuid')).set(owner.auth).expect(404);
      await t.http
        .get(path(orgId, `/${domain.id}`))
        .set(owner.auth)
        .expect(200);
    });

    it('needs organization:write', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      await expectScopeEnforced(
        (h) => t.http.delete(path(orgId, `/${domain.id}`)).set(h),
        'organization:write',
        readOnly,
      );
      await t.http
        .get(path(orgId, `/${domain.id}`))
        .set(owner.auth)
        .expect(200);
    });
  });

  describe('verify (against a real DNS server on loopback)', () => {
    const verify = (domain: Domain, who: TestUser = owner) =>
      t.http.post(path(orgId, `/${domain.id}/verify`)).set(who.auth);

    it('verifies when a TXT record of _posthog-challenge.<domain> equals the challenge (chunks joined)', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const c = domain.verification_challenge;
      dns.setTxt(challengeName(domain.domain), ['v=spf1 -all', [c.slice(0, 20), c.slice(20)]]);
      const now = new Date('2026-03-04T05:06:07.089Z');
      t.clock.set(now);
      const info = jest.spyOn(Logger.prototype, 'log');
      const asked = dns.queries.length;
      const res = await verify(domain, admin).send({}).expect(200);
      expect(res.body).toEqual({ ...domain, is_verified: true, verified_at: '2026-03-04T05:06:07.089Z' });
      expect(res.body.verified_at).toMatch(ISO);
      expect(dns.queries.slice(asked)).toContain(challengeName(domain.domain));
      expect(info).toHaveBeenCalledWith(expect.objectContaining({ domainId: domain.id }), 'domain verified');
      const rows = await t.dataSource.query('SELECT verified_at FROM organization_domains WHERE id = $1', [
        domain.id,
      ]);
      expect(rows[0].verified_at.toISOString()).toBe(now.toISOString());
      expect(
        (
          await t.http
            .get(path(orgId, `/${domain.id}`))
            .set(member.auth)
            .expect(200)
        ).body,
      ).toEqual(res.body);
    });

    it('answers 400 already_verified for a verified domain, and keeps verified_at', async () => {
      const domain = await verifyThroughDns(await create({ domain: uniqueDomain() }));
      t.clock.advance(60_000);
      const res = await verify(domain).expect(400);
      expect(res.body).toEqual({
        type: 'validation_error',
        code: 'already_verified',
        detail: 'This domain has already been verified.',
        attr: null,
      });
      expect(
        (
          await t.http
            .get(path(orgId, `/${domain.id}`))
            .set(owner.auth)
            .expect(200)
        ).body.verified_at,
      ).toBe(domain.verified_at);
    });

    it('stays unverified (200) when the TXT records hold other values', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const other = await create({ domain: uniqueDomain() });
      dns.setTxt(challengeName(domain.domain), [
        other.verification_challenge,
        domain.verification_challenge.toUpperCase(),
        `${domain.verification_challenge} `,
        domain.verification_challenge.slice(1),
      ]);
      const info = jest.spyOn(Logger.prototype, 'log');
      const res = await verify(domain).expect(200);
      expect(res.body).toEqual(domain);
      expect(info).toHaveBeenCalledWith(
        expect.objectContaining({ domainId: domain.id, code: 'NO_MATCH' }),
        expect.stringContaining('no TXT record matches'),
      );
    });

    it('stays unverified when the challenge is published at the domain itself, not _posthog-challenge', async () => {
      const domain = await create({ domain: uniqueDomain() });
      dns.setTxt(domain.domain, [domain.verification_challenge]);
      expect((await verify(domain).expect(200)).body).toEqual(domain);
    });

    it.each([
      ['the name does not exist (NXDOMAIN)', () => undefined, 'ENOTFOUND'],
      ['the name has no TXT record (NODATA)', (name: string) => dns.setTxt(name, []), 'ENODATA'],
    ])('stays unverified (200) when %s', async (_label, publish, code) => {
      const domain = await create({ domain: uniqueDomain() });
      publish(challengeName(domain.domain));
      const info = jest.spyOn(Logger.prototype, 'log');
      const res = await verify(domain).expect(200);
      expect(res.body).toEqual(domain);
      expect(info).toHaveBeenCalledWith(
        expect.objectContaining({ domainId: domain.id, code }),
        expect.any(String),
      );
    });

    it('stays unverified (200) and logs a warning when the server fails (SERVFAIL)', async () => {
      const domain = await create({ domain: uniqueDomain() });
      dns.fail(challengeName(domain.domain));
      const warn = jest.spyOn(Logger.prototype, 'warn');
      const res = await verify(domain).expect(200);
      expect(res.body).toEqual(domain);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({
          domainId: domain.id,
          code: 'ESERVFAIL',
          record: challengeName(domain.domain),
        }),
        expect.stringContaining('DNS lookup failed'),
      );
    });

    it('verifies on a later attempt once the record is published', async () => {
      const domain = await create({ domain: uniqueDomain() });
      expect((await verify(domain).expect(200)).body.is_verified).toBe(false);
      dns.setTxt(challengeName(domain.domain), [domain.verification_challenge]);
      const res = await verify(domain).expect(200);
      expect(res.body).toMatchObject({ is_verified: true, verified_at: expect.stringMatching(ISO) });
    });

    it('needs admin or above: members 403; strangers, other organizations’ domains and bad ids 404', async () => {
      const domain = await create({ domain: uniqueDomain() });
      dns.setTxt(challengeName(domain.domain), [domain.verification_challenge]);
      expect((await verify(domain, member).expect(403)).body).toEqual(INSUFFICIENT);
      expect((await verify(domain, stranger).expect(404)).body).toEqual(NOT_FOUND);
      const foreign = await create({ domain: uniqueDomain('foreign') }, stranger, otherOrgId);
      dns.setTxt(challengeName(foreign.domain), [foreign.verification_challenge]);
      await t.http
        .post(path(orgId, `/${foreign.id}/verify`))
        .set(owner.auth)
        .expect(404);
      await t.http.post(path(orgId, '/not-a-uuid/verify')).set(owner.auth).expect(404);
      expect(
        (
          await t.http
            .get(path(otherOrgId, `/${foreign.id}`))
            .set(stranger.auth)
            .expect(200)
        ).body.is_verified,
      ).toBe(false);
      expect(
        (
          await t.http
            .get(path(orgId, `/${domain.id}`))
            .set(owner.auth)
            .expect(200)
        ).body.is_verified,
      ).toBe(false);
    });

    it('needs organization:write', async () => {
      const domain = await create({ domain: uniqueDomain() });
      const readOnly = await t.factories.keyFor(owner, 'organization:read');
      await expectScopeEnforced(
        (h) => t.http.post(path(orgId, `/${domain.id}/verify`)).set(h),
        'organization:write',
        readOnly,
      );
    });
  });

  describe('verify with an unreachable DNS server', () => {
    const unreachable = async (servers: string) => {
      const app = await createTestApp({ DNS_SERVERS: servers, DNS_TIMEOUT_MS: '500' });
      try {
        const user = await app.factories.user();
        const org = await app.factories.organization(user);
        const domain = (
          await app.http
            .post(`/api/organizations/${org.id}/domains`)
            .set(user.auth)
            .send({ domain: uniqueDomain() })
            .expect(201)
        ).body as Domain;
        const warn = jest.spyOn(Logger.prototype, 'warn');
        const started = Date.now();
        const res = await app.http
          .post(`/api/organizations/${org.id}/domains/${domain.id}/verify`)
          .set(user.auth)
          .expect(200);
        const elapsed = Date.now() - started;
        expect(res.body).toEqual(domain);
        return { elapsed, warn, domain };
      } finally {
        await app.close();
      }
    };

    it('times out after DNS_TIMEOUT_MS on a server that never answers: 200, unverified, a warning', async () => {
      const silent = await startSilentUdpPort();
      try {
        const { elapsed, warn, domain } = await unreachable(silent.address);
        expect(silent.received()).toBeGreaterThan(0);
        expect(elapsed).toBeGreaterThanOrEqual(400);
        expect(elapsed).toBeLessThan(500 + margin(1500));
        expect(warn).toHaveBeenCalledWith(
          expect.objectContaining({ domainId: domain.id, code: 'ETIMEOUT' }),
          expect.stringContaining('DNS lookup failed'),
        );
      } finally {
        await silent.close();
      }
    });

    it('answers 200 unverified at once when the port refuses (nothing listening)', async () => {
      const { elapsed, warn, domain } = await unreachable(await closedUdpPort());
      expect(elapsed).toBeLessThan(margin(2000));
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ domainId: domain.id, code: expect.stringMatching(/^E[A-Z]+$/) }),
        expect.stringContaining('DNS lookup failed'),
      );
    });
  });

  describe('deleting the organization', () => {
    it('deletes its domains (ON DELETE CASCADE) and frees their names', async () => {
      const doomed = (await t.factories.organization(owner, 'Doomed')).id;
      const gone = await create({ domain: uniqueDomain('gone') }, owner, doomed);
      await verifyThroughDns(await create({ domain: uniqueDomain('gone') }, owner, doomed), doomed);
      const kept = await create({ domain: uniqueDomain('kept') });
      await t.http.delete(`/api/organizations/${doomed}`).set(owner.auth).expect(204);
      const rows = await t.dataSource.query(
        'SELECT count(*)::int AS n FROM organization_domains WHERE organization_id = $1',
        [doomed],
      );
      expect(rows[0].n).toBe(0);
      await t.http
        .get(path(orgId, `/${kept.id}`))
        .set(owner.auth)
        .expect(200);
      await create({ domain: gone.domain }, stranger, otherOrgId);
    });
  });
});
