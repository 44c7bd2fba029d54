import { expect } from '@jest/globals';
import type { Response } from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import type { TestApp } from './create-test-app.js';
import type { TestDnsServer } from './dns-server.js';
import type { TestUser } from './factories.js';

export const SCIM_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const SCIM_LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

let sequence = 0;

/** A verified domain of an organization with SCIM on, made through the API as an identity provider's admin would. */
export interface ScimTenant {
  organizationId: string;
  domainId: string;
  domain: string;
  token: string;
  /** `/scim/v2/<domain id>` */
  base: string;
  owner: TestUser;
}

/**
 * Creates an organization owned by `owner`, adds a domain, verifies it through the test DNS server, and enables SCIM
 * (`POST …/domains/:id/scim/`), checking the answer field by field.
 */
export async function scimTenant(t: TestApp, dns: TestDnsServer, owner?: TestUser): Promise<ScimTenant> {
  const who = owner ?? (await t.factories.user());
  const organizationId = (await t.factories.organization(who, `SCIM ${++sequence}`)).id;
  const domain = `scim-${sequence}-${process.pid}-${Math.random().toString(36).slice(2, 8)}.example.com`;
  const domains = `/api/organizations/${organizationId}/domains`;
  const made = (await t.http.post(domains).set(who.auth).send({ domain }).expect(201)).body as {
    id: string;
    verification_challenge: string;
  };
  dns.setTxt(`_posthog-challenge.${domain}`, [made.verification_challenge]);
  await t.http.post(`${domains}/${made.id}/verify`).set(who.auth).expect(200);
  const enabled = await t.http.post(`${domains}/${made.id}/scim`).set(who.auth).expect(201);
  expect(enabled.body).toEqual({
    scim_enabled: true,
    scim_base_url: expect.stringMatching(new RegExp(`^http://[^/]+/scim/v2/${made.id}$`)),
    scim_bearer_token: expect.stringMatching(/^phscim_[0-9A-Za-z]{43}$/),
  });
  return {
    organizationId,
    domainId: made.id,
    domain,
    token: enabled.body.scim_bearer_token as string,
    base: `/scim/v2/${made.id}`,
    owner: who,
  };
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * A SCIM client of one tenant: every call sends the token and application/scim+json and checks the answer's media
 * type. (How fast a step answers is the bench's to measure, not a timed test's: a busy machine would fail it.)
 */
export function scimClient(http: TestAgent, tenant: ScimTenant, token = tenant.token) {
  return async (method: Method, path: string, body?: unknown): Promise<Response> => {
    let req = http[method](`${tenant.base}${path}`).set('Authorization', `Bearer ${token}`);
    if (body !== undefined) req = req.set('Content-Type', 'application/scim+json').send(JSON.stringify(body));
    const res = await req;
    if (res.status !== 204) expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
    return res;
  };
}

/** Expects an RFC 7644 error body of this status (and scimType, when given). */
export function expectScimError(res: Response, status: number, scimType?: string): void {
  expect(res.status).toBe(status);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect(body).toMatchObject({ schemas: [SCIM_ERROR], status: String(status), detail: expect.any(String) });
  if (scimType) expect(body.scimType).toBe(scimType);
}

/** The JSON of a SCIM answer (supertest does not parse application/scim+json). */
export function json(res: Response): Response['body'] {
  return JSON.parse(res.text) as Response['body'];
}
