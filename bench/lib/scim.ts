/**
 * The SCIM scenario (`scim`): every step of Okta's "SCIM 2.0 SPEC Test" (test/e2e/scim-okta-spec-test.e2e-spec.ts,
 * the same order and bodies) sent to the running service as an identity provider sends it, one request at a time,
 * `iterations` times over, each time with a new user; each step's latency (p50, p99, max) against the target of
 * 400 ms. The tenant: a verified domain of the invites' organization (inserted verified: the bench has no DNS),
 * SCIM enabled through the API by the caller (its owner). Every answer's status is checked.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';

export const SCIM_STEP_MAX_MS = 400;
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export interface ScimStepResult {
  step: string;
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ScimResult {
  iterations: number;
  steps: ScimStepResult[];
}

/** The value at quantile `q` (0–1) of `values` (nearest rank); 0 for none. */
export function quantile(values: readonly number[], q: number): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Each step's p50, p99 and max (ms, one decimal), in the order the steps first ran. */
export function summarizeSteps(samples: ReadonlyMap<string, readonly number[]>): ScimStepResult[] {
  const r = (x: number) => Math.round(x * 10) / 10;
  return [...samples].map(([step, ms]) => ({
    step,
    samples: ms.length,
    p50: r(quantile(ms, 0.5)),
    p99: r(quantile(ms, 0.99)),
    max: r(Math.max(0, ...ms)),
  }));
}

type Call = (step: string, method: string, path: string, status: number, body?: unknown) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One pass of Okta's sequence for a new user of `domain`. */
async function oktaSequence(call: Call, domain: string): Promise<void> {
  const userName = `Okta.Spec.${randomUUID().slice(0, 8)}@${domain}`;
  const filter = (value: string) => `/Users?filter=${encodeURIComponent(`userName eq "${value}"`)}`;
  await call('ServiceProviderConfig', 'GET', '/ServiceProviderConfig', 200);
  const page = await call('GET /Users?count=1&startIndex=1', 'GET', '/Users?count=1&startIndex=1', 200);
  const listed = page.Resources?.[0]?.id as string | undefined;
  if (listed) await call('GET /Users/{id} of the listed user', 'GET', `/Users/${listed}`, 200);
  await call('filter on an invalid userName (0 results)', 'GET', filter('invalid-user'), 200);
  await call('GET /Users/{random id} (404)', 'GET', `/Users/${randomUUID()}`, 404);
  await call('filter on a random userName (0 results)', 'GET', filter(userName), 200);
  const user = {
    schemas: [USER],
    userName,
    name: { givenName: 'Okta', familyName: 'Spec' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Okta Spec',
    locale: 'en-US',
    externalId: `00u${randomUUID().slice(0, 8)}`,
    groups: [],
    password: 'not-kept-1A!',
    active: true,
  };
  const created = await call('POST /Users (201)', 'POST', '/Users', 201, user);
  const id = created.id as string;
  await call('GET /Users/{id} of the new user', 'GET', `/Users/${id}`, 200);
  await call('POST /Users again (409 uniqueness)', 'POST', '/Users', 409, user);
  await call('filter on the userName in upper case (1 result)', 'GET', filter(userName.toUpperCase()), 200);
  await call('GET /Groups', 'GET', '/Groups', 200);
  await call('GET /Users?startIndex=2&count=1', 'GET', '/Users?startIndex=2&count=1', 200);
  await call('PATCH active false (deactivate)', 'PATCH', `/Users/${id}`, 200, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', value: { active: false } }],
  });
  await call('PUT active true (reactivate)', 'PUT', `/Users/${id}`, 200, {
    ...user,
    name: { givenName: 'Okta', familyName: 'Renamed' },
  });
  await call('DELETE /Users/{id} (204)', 'DELETE', `/Users/${id}`, 204);
}

export async function benchScim(options: {
  db: pg.Client;
  serviceUrl: string;
  apiKey: string;
  organizationId: string;
  iterations: number;
  log: (m: string) => void;
}): Promise<ScimResult> {
  const { db, serviceUrl, apiKey, organizationId } = options;
  const domain = `scim-${Date.now().toString(36)}.bench.example`;
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO organization_domains (organization_id, domain, verification_challenge, verified_at)
     VALUES ($1, $2, 'bench', now()) RETURNING id`,
    [organizationId, domain],
  );
  const domainId = rows[0].id;
  const enabled = await fetch(`${serviceUrl}/api/organizations/${organizationId}/domains/${domainId}/scim`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (enabled.status !== 201)
    throw new Error(`scim: enabling SCIM answered ${enabled.status} ${await enabled.text()}`);
  const token = ((await enabled.json()) as { scim_bearer_token: string }).scim_bearer_token;
  const samples = new Map<string, number[]>();
  const call: Call = async (step, method, path, status, body) => {
    const started = performance.now();
    const res = await fetch(`${serviceUrl}/scim/v2/${domainId}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== status)
      throw new Error(`scim: ${step}: ${res.status} (expected ${status}) ${text.slice(0, 300)}`);
    samples.set(step, [...(samples.get(step) ?? []), ms]);
    return text ? JSON.parse(text) : null;
  };
  // A user that stays (as the e2e test's first step makes one), so that the first page has one to read by id.
  const kept = `kept-${randomUUID().slice(0, 8)}@${domain}`;
  await call('(setup) a user that stays', 'POST', '/Users', 201, {
    schemas: [USER],
    userName: kept,
    name: { givenName: 'Kept', familyName: 'User' },
    emails: [{ primary: true, value: kept, type: 'work' }],
    active: true,
  });
  samples.clear();
  for (let i = 0; i < options.iterations; i++) await oktaSequence(call, domain);
  options.log(`scim: ${options.iterations} passes of Okta's SCIM 2.0 SPEC Test on domain ${domain}`);
  return { iterations: options.iterations, steps: summarizeSteps(samples) };
}

/** The SCIM steps as a Markdown table. */
export function formatScimTable(result: ScimResult): string {
  const lines = [
    `| Okta SCIM 2.0 SPEC Test step (${result.iterations} passes) | p50 ms | p99 ms | max ms |`,
    '| --- | --- | --- | --- |',
    ...result.steps.map((s) => `| ${s.step} | ${s.p50} | ${s.p99} | ${s.max} |`),
  ];
  return lines.join('\n');
}
