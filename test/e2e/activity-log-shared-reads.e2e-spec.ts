/**
 * Reads of a recording through a sharing link (`/api/shared/:access_token`, its snapshots and its events: no
 * key) are logged too (docs/security.md, "Activity log"): no user, `actor: anonymous` `via: sharing_link`, the
 * address, the recording and its project; never the token. An unknown token logs nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, snapshotEvent } from '../support/recordings.js';

interface Row {
  user_id: number | null;
  api_key_id: string | null;
  is_system: boolean;
  activity: string;
  scope: string;
  item_id: string;
  team_id: number;
  organization_id: string;
  ip: string | null;
  detail: { id: string; context: Record<string, unknown> };
}

describe('activity log of reads through a sharing link', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let projectId: number;
  let sessionId: string;
  let accessToken: string;

  const sharedReads = async () =>
    (await t.dataSource.query(
      `SELECT user_id, api_key_id, is_system, activity, scope, item_id, team_id, organization_id, host(ip) AS ip,
              detail
         FROM activity_logs WHERE detail->'context'->>'via' = 'sharing_link' ORDER BY created_at, id`,
    )) as Row[];

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    projectId = org.teams[0].id;
    sessionId = newSessionId('shared-log');
    const T0 = t.clock.now().getTime() - 600_000;
    await t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token: org.teams[0].api_token,
          sessionId,
          distinctId: 'viewer@example.com',
          events: [
            { type: 4, timestamp: T0, data: { href: 'https://shop.example/', width: 800, height: 600 } },
            { type: 3, timestamp: T0 + 20_000, data: { source: 1, positions: [] } },
          ],
        }),
      ])
      .expect(200);
    accessToken = (
      await t.http
        .patch(`/api/projects/${projectId}/session_recordings/${sessionId}/sharing`)
        .set(owner.auth)
        .send({ enabled: true })
        .expect(200)
    ).body.access_token as string;
  }, 60000);

  afterAll(async () => {
    await t?.close();
  });

  it('logs the recording, its snapshots and its events read through the link, without a user or the token', async () => {
    await t.http.get(`/api/shared/${accessToken}`).expect(200);
    await t.http.get(`/api/shared/${accessToken}/snapshots`).expect(200);
    await t.http.get(`/api/shared/${accessToken}/events`).expect(200);
    const rows = await sharedReads();
    expect(rows.map((r) => r.activity)).toEqual(['viewed', 'viewed_snapshots', 'viewed_events']);
    for (const row of rows) {
      expect(row).toMatchObject({
        user_id: null,
        api_key_id: null,
        is_system: false,
        scope: 'Replay',
        item_id: sessionId,
        team_id: projectId,
        organization_id: orgId,
        detail: {
          id: sessionId,
          context: { method: 'GET', actor: 'anonymous', via: 'sharing_link' },
        },
      });
      expect(row.ip).toMatch(/127\.0\.0\.1|::1/);
      expect(JSON.stringify(row)).not.toContain(accessToken);
    }
    // In the project's log, as PostHog's entries without a user.
    const page = (
      await t.http.get(`/api/projects/${projectId}/activity_log/?scope=Replay`).set(owner.auth).expect(200)
    ).body as { results: { user: unknown; activity: string; detail: { context: { via?: string } } }[] };
    const viaLink = page.results.filter((e) => e.detail.context.via === 'sharing_link');
    expect(viaLink).toHaveLength(3);
    expect(viaLink.every((e) => e.user === null)).toBe(true);
  });

  it('logs nothing for an unknown or disabled token (it names no recording)', async () => {
    const before = (await sharedReads()).length;
    await t.http.get('/api/shared/not-a-real-token-0123456789').expect(404);
    await t.http
      .patch(`/api/projects/${projectId}/session_recordings/${sessionId}/sharing`)
      .set(owner.auth)
      .send({ enabled: false })
      .expect(200);
    await t.http.get(`/api/shared/${accessToken}`).expect(404);
    expect((await sharedReads()).length).toBe(before);
  });
});
