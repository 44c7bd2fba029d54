import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { apiOperations, type ApiOperation, fillPath } from '../support/api-operations.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import {
  SCIM_ERROR,
  SCIM_GROUP,
  SCIM_PATCH,
  SCIM_USER,
  scimTenant,
  type ScimTenant,
} from '../support/scim.js';

/**
 * Hostile input on every /scim/v2 operation of the OpenAPI document (the SCIM twin of input-fuzz.e2e-spec.ts):
 * bodies of every wrong shape and hostile text, hostile filters, paging values and ids. An identity provider's
 * mistakes and an attacker's probes answer 4xx RFC 7644 error bodies (`schemas` …:Error, `status`, `detail`,
 * application/scim+json), never 5xx; NUL and lone surrogates in a body are 400.
 */

const NUL = 'before\u0000after';
const SURROGATE = 'before\ud800after';

const deep = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;

/** Bodies of every wrong shape (JSON text), for every operation taking one. */
function hostileBodies(domain: string): [string, string][] {
  const user = (extra: Record<string, unknown>) =>
    JSON.stringify({ schemas: [SCIM_USER], userName: `fuzz@${domain}`, ...extra });
  const group = (extra: Record<string, unknown>) =>
    JSON.stringify({ schemas: [SCIM_GROUP], displayName: 'Fuzz', ...extra });
  const patch = (operations: unknown) => JSON.stringify({ schemas: [SCIM_PATCH], Operations: operations });
  const bodies: [string, string][] = [
    ['null', 'null'],
    ['array', '[]'],
    ['string', '"text"'],
    ['number', '42'],
    ['empty object', '{}'],
    ['truncated JSON', '{"userName": '],
    ['too deep', `{"a": ${deep(5000)}}`],
    ['reserved keys', '{"__proto__": {"admin": true}, "constructor": {"prototype": 1}, "userName": 5}'],
    ['userName NUL', user({ userName: `fu${NUL}@${domain}` })],
    ['userName surrogate', user({ userName: `fu${SURROGATE}@${domain}` })],
    ['userName object', user({ userName: { $ne: null } })],
    ['userName huge', user({ userName: `${'a'.repeat(100_000)}@${domain}` })],
    ['name NUL', user({ name: { givenName: NUL, familyName: SURROGATE } })],
    ['name array', user({ name: ['a', 'b'] })],
    ['emails not a list', user({ emails: 'a@b.c' })],
    ['emails hostile', user({ emails: [{ value: NUL, type: { x: 1 }, primary: 'maybe' }] })],
    ['active odd', user({ active: 'perhaps' })],
    ['externalId NUL', user({ externalId: NUL })],
    ['externalId object', user({ externalId: { a: 1 } })],
    ['displayName NUL', group({ displayName: NUL })],
    ['displayName surrogate', group({ displayName: SURROGATE })],
    ['displayName number', group({ displayName: 7 })],
    ['members hostile', group({ members: [{ value: NUL }, { value: 'not-a-uuid' }, 5, null] })],
    ['members object', group({ members: { value: { $gt: '' } } })],
    ['Operations missing', JSON.stringify({ schemas: [SCIM_PATCH] })],
    ['Operations not a list', patch('replace')],
    ['Operations empty', patch([])],
    ['op unknown', patch([{ op: 'destroy', path: 'active', value: false }])],
    ['op NUL', patch([{ op: `replace${NUL}`, value: { active: false } }])],
    ['path NUL', patch([{ op: 'replace', path: `active${NUL}`, value: false }])],
    ['path filter hostile', patch([{ op: 'remove', path: 'members[value eq "x" or 1 eq 1]' }])],
    ['path filter unclosed', patch([{ op: 'remove', path: 'members[value eq "' }])],
    ['value wrong type', patch([{ op: 'replace', path: 'active', value: { nested: [1, 2] } }])],
    ['value NUL', patch([{ op: 'replace', value: { displayName: NUL, 'name.givenName': SURROGATE } }])],
    [
      'many operations',
      patch(Array.from({ length: 5000 }, () => ({ op: 'replace', value: { active: true } }))),
    ],
  ];
  return bodies;
}

const FILTERS = [
  'userName eq',
  'userName eq "a" or',
  '((((((((((',
  'userName eq "a" and',
  `userName eq "${NUL}"`,
  'emails[type eq "work"',
  'emails[type eq "work"].value eq',
  'meta.lastModified gt "2020-01-01T00:00:00Z"',
  'userName sw "a"',
  'not (userName eq "a")',
  'active eq "maybe"',
  'externalId eq 123',
  'displayName eq null',
  'id eq "../../etc/passwd"',
  'userName eq "a" and userName eq "b" and userName eq "c" and userName eq "d" and userName eq "e"',
  // Long, within Node's 16 KB request head (past it Node answers 431 before any route, without a body).
  'x'.repeat(12_000),
  '"',
  'userName pr',
];

const PAGING = [
  // A lone surrogate, as a client can only send it (CESU-8 bytes, not UTF-8).
  'filter=displayName%20eq%20%22%ED%A0%80%22',
  'startIndex=-5',
  'count=-1',
  'count=1e309',
  'startIndex=abc&count=def',
  'count=99999999999999999999',
  'startIndex=1&startIndex=2',
  'count[]=1',
  'attributes=%00&excludedAttributes=%ED%A0%80',
  'excludedAttributes=' + 'members,'.repeat(2000),
];

const HOSTILE_IDS = [
  'not-a-uuid',
  '%00',
  '%ED%A0%80',
  'a'.repeat(5000),
  '..%2F..%2Fetc%2Fpasswd',
  '00000000-0000-0000-0000-000000000000',
  "1'%20OR%20'1'='1",
];

describe('hostile input on every /scim/v2 operation', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let tenant: ScimTenant;
  let operations: ApiOperation[];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    dns = await startDnsServer();
    t = await createTestApp({
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: '300',
      SCIM_RATE_LIMIT_PER_MINUTE: '0',
    });
    operations = apiOperations(t.app).operations.filter((op) => op.path.startsWith('/scim/v2/'));
    tenant = await scimTenant(t, dns);
    const auth = `Bearer ${tenant.token}`;
    const made = (path: string, body: unknown) =>
      t.http
        .post(`${tenant.base}${path}`)
        .set('Authorization', auth)
        .set('Content-Type', 'application/scim+json')
        .send(JSON.stringify(body));
    const user = await made('/Users', { schemas: [SCIM_USER], userName: `known@${tenant.domain}` });
    ids.Users = (JSON.parse(user.text) as { id: string }).id;
    const group = await made('/Groups', { schemas: [SCIM_GROUP], displayName: 'Known' });
    ids.Groups = (JSON.parse(group.text) as { id: string }).id;
    ids.Schemas = SCIM_USER;
    ids.ResourceTypes = 'User';
  }, 60000);

  afterAll(async () => {
    await t?.close();
    await dns?.close();
  });

  const send = (op: ApiOperation, path: string, body?: string) => {
    const req = t.http[op.method](path).set('Authorization', `Bearer ${tenant.token}`);
    return body === undefined ? req : req.set('Content-Type', 'application/scim+json').send(body);
  };
  const urlOf = (op: ApiOperation, id?: string) =>
    fillPath(op.path, {
      domain_id: tenant.domainId,
      id: id ?? ids[op.path.split('/')[4]] ?? 'unknown',
    });

  /** What is wrong with an answer: a 5xx, or a 4xx that is not an RFC 7644 error body of its status. */
  function problem(res: Response): string | null {
    if (res.status >= 500) return `${res.status} ${res.text.slice(0, 200)}`;
    if (res.status < 400) return null;
    if (!/^application\/scim\+json/.test(String(res.headers['content-type'])))
      return `${res.status} as ${String(res.headers['content-type'])}`;
    const body = JSON.parse(res.text) as { schemas?: unknown; status?: unknown; detail?: unknown };
    if (
      JSON.stringify(body.schemas) !== JSON.stringify([SCIM_ERROR]) ||
      body.status !== String(res.status) ||
      typeof body.detail !== 'string'
    ) {
      return `${res.status} ${res.text.slice(0, 200)}`;
    }
    return null;
  }

  it('finds the SCIM operations in the document', () => {
    expect(operations.map((op) => `${op.method.toUpperCase()} ${op.path}`)).toEqual(
      expect.arrayContaining([
        'POST /scim/v2/{domain_id}/Users',
        'PATCH /scim/v2/{domain_id}/Users/{id}',
        'PUT /scim/v2/{domain_id}/Groups/{id}',
        'GET /scim/v2/{domain_id}/Groups',
      ]),
    );
  });

  it('hostile bodies: 4xx SCIM error bodies, never 5xx; NUL and lone surrogates are 400', async () => {
    const wrong: string[] = [];
    const writes = operations.filter((op) => ['post', 'put', 'patch'].includes(op.method));
    expect(writes.length).toBeGreaterThanOrEqual(6);
    for (const op of writes) {
      for (const [name, body] of hostileBodies(tenant.domain)) {
        const res = await send(op, urlOf(op), body);
        const bad = problem(res);
        if (bad) wrong.push(`${op.method} ${op.path} [${name}]: ${bad}`);
        if (/NUL|surrogate/.test(name) && res.status !== 400 && res.status !== 404 && res.status !== 405)
          wrong.push(`${op.method} ${op.path} [${name}]: ${res.status}, not 400`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it('hostile filters and paging on every list: 4xx SCIM error bodies or an answer, never 5xx', async () => {
    const wrong: string[] = [];
    const lists = operations.filter((op) => op.method === 'get' && !op.path.endsWith('{id}'));
    for (const op of lists) {
      const queries = [...FILTERS.map((f) => `filter=${encodeURIComponent(f)}`), ...PAGING];
      for (const query of queries) {
        const bad = problem(await send(op, `${urlOf(op)}?${query}`));
        if (bad) wrong.push(`GET ${op.path}?${query.slice(0, 60)}: ${bad}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it('hostile ids on every operation taking one: 4xx SCIM error bodies, never 5xx', async () => {
    const wrong: string[] = [];
    for (const op of operations.filter((o) => o.path.endsWith('{id}'))) {
      for (const id of HOSTILE_IDS) {
        const body =
          op.method === 'get' || op.method === 'delete'
            ? undefined
            : JSON.stringify({
                schemas: [SCIM_PATCH],
                Operations: [{ op: 'replace', value: { active: true } }],
              });
        const res = await send(op, urlOf(op, id), body);
        const bad = problem(res);
        if (bad) wrong.push(`${op.method} ${op.path} {id=${id.slice(0, 40)}}: ${bad}`);
        if (res.status < 400) wrong.push(`${op.method} ${op.path} {id=${id.slice(0, 40)}}: ${res.status}`);
      }
    }
    // The domain id too: another, malformed, or hostile one is 401 with a SCIM body.
    for (const domain of ['not-a-uuid', '%00', '00000000-0000-0000-0000-000000000000']) {
      const res = await t.http.get(`/scim/v2/${domain}/Users`).set('Authorization', `Bearer ${tenant.token}`);
      const bad = problem(res) ?? (res.status < 400 ? String(res.status) : null);
      if (bad) wrong.push(`GET /scim/v2/${domain}/Users: ${bad}`);
    }
    expect(wrong).toEqual([]);
  }, 300_000);
});
