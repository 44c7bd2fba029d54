import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

interface Outcome {
  kind: 'single' | 'bulk';
  status: number;
  body: unknown;
}

/**
 * Concurrent single and bulk invites of overlapping addresses, in opposite orders and cases, end in 201 (single
 * and bulk) or 400 (an address of a member), never a 5xx, and leave exactly one pending invite per address. Each
 * success answers every invite it created, even when a concurrent request replaced it right after.
 */
describe('invites under concurrency', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
  });

  afterAll(async () => {
    await t.close();
  });

  const pending = async (orgId: string) =>
    (await t.dataSource.query(
      `SELECT lower(target_email) AS email, count(*)::int AS n, array_agg(id::text) AS ids
         FROM organization_invites WHERE organization_id = $1 GROUP BY 1 ORDER BY 1`,
      [orgId],
    )) as { email: string; n: number; ids: string[] }[];

  async function round(orgId: string, addresses: string[], memberEmail: string): Promise<Outcome[]> {
    const forward = addresses.map((a) => ({ target_email: a }));
    const backward = [...addresses].reverse().map((a) => ({ target_email: a.toUpperCase() }));
    const requests: (() => Promise<Outcome>)[] = [];
    for (let i = 0; i < 30; i++) {
      const kind = i % 3 === 0 ? 'single' : 'bulk';
      if (kind === 'single') {
        const email = i === 27 ? memberEmail : addresses[i % addresses.length];
        requests.push(async () => {
          const res = await t.http
            .post(`/api/organizations/${orgId}/invites`)
            .set(owner.auth)
            .send({ target_email: i % 2 ? email.toUpperCase() : email, send_email: false });
          return { kind, status: res.status, body: res.body };
        });
      } else {
        // Overlapping subsets, half of them in the opposite order; one bulk names a member (400, nothing stored).
        const base = i % 2 ? forward : backward;
        const rotated = [...base.slice(i % addresses.length), ...base.slice(0, i % addresses.length)];
        const items = i === 28 ? [...rotated, { target_email: memberEmail }] : rotated;
        requests.push(async () => {
          const res = await t.http
            .post(`/api/organizations/${orgId}/invites/bulk`)
            .set(owner.auth)
            .send(items.map((item) => ({ ...item, send_email: false })));
          return { kind, status: res.status, body: res.body };
        });
      }
    }
    return Promise.all(requests.map((r) => r()));
  }

  it('30 concurrent single and bulk invites of the same addresses: no 5xx, one invite per address', async () => {
    const member = await t.factories.user();
    for (let r = 0; r < 3; r++) {
      const org = await t.factories.organization(owner);
      await t.factories.member(org.id, member, MembershipLevel.MEMBER);
      const addresses = Array.from({ length: 6 }, (_, i) => `race${r}-${i}@example.com`);
      const outcomes = await round(org.id, addresses, member.email);

      const unexpected = outcomes.filter((o) => !(o.status === 201 || o.status === 400));
      expect(unexpected).toEqual([]);
      // The two requests naming the member are the only refusals, with the documented body.
      const refused = outcomes.filter((o) => o.status === 400);
      expect(refused).toHaveLength(2);
      for (const o of refused) {
        expect(o.body).toEqual(expect.objectContaining({ type: 'validation_error', code: 'already_member' }));
      }
      expect(outcomes.filter((o) => o.status === 201 && o.kind === 'single')).toHaveLength(9);
      expect(outcomes.filter((o) => o.status === 201 && o.kind === 'bulk')).toHaveLength(19);
      // Every success answers what it created: the invite, or one per item of the bulk.
      for (const o of outcomes.filter((x) => x.status === 201)) {
        if (o.kind === 'single') expect(o.body).toMatchObject({ id: expect.any(String) });
        else expect((o.body as unknown[]).length).toBeGreaterThan(0);
      }

      const rows = await pending(org.id);
      expect(rows.map((row) => [row.email, row.n])).toEqual(addresses.map((a) => [a, 1]));
      // Each surviving invite is one that a successful request returned (the last writer won, nothing else).
      const returned = new Set(
        outcomes
          .filter((o) => o.status < 300)
          .flatMap((o) => (Array.isArray(o.body) ? o.body : [o.body]) as { id: string }[])
          .map((invite) => invite.id),
      );
      for (const row of rows) expect(returned.has(row.ids[0])).toBe(true);
    }
  });
});
