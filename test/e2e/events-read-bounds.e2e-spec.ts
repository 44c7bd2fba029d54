import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

interface ListedEvent {
  uuid: string;
  properties: Record<string, unknown>;
  properties_truncated: boolean;
}

/**
 * The events list's bounds on what it reads (docs/limits.md, "Reading events"): a value over 64 KiB is replaced
 * by the marker, and a page ends early at EVENTS_LIST_MAX_BYTES with `next` at the first event left out.
 */
describe('Analytics events: the list reads bounded pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;
  const base = Date.now() - 60_000;
  const uuids = Array.from({ length: 6 }, () => randomUUID());
  const HUGE = 'h'.repeat(70_000);
  const BLOB = 'b'.repeat(20_000);

  beforeAll(async () => {
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0', EVENTS_LIST_MAX_BYTES: '64kb' });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Event reads');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    // Six events of ~20 KB, a second apart; the newest also carries a value of 70 KB.
    await t.http
      .post('/batch/')
      .set('Content-Type', 'application/json')
      .send({
        api_key: token,
        batch: uuids.map((uuid, i) => ({
          event: 'viewed',
          uuid,
          distinct_id: 'reader',
          timestamp: new Date(base + i * 1000).toISOString(),
          properties: { n: i, blob: BLOB, ...(i === 5 ? { huge: HUGE, nested: { huge: HUGE } } : {}) },
        })),
      })
      .expect(200);
    // Two events of 80 KB, each value within 64 KiB.
    await t.http
      .post('/batch/')
      .set('Content-Type', 'application/json')
      .send({
        api_key: token,
        batch: [0, 1].map((i) => ({
          event: 'viewed',
          distinct_id: 'fat',
          timestamp: new Date(base + i * 1000).toISOString(),
          properties: { n: i, a: 'a'.repeat(40_000), b: 'b'.repeat(40_000) },
        })),
      })
      .expect(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('replaces a value over 64 KiB by the marker and flags the event; retrieve shows it whole', async () => {
    const res = await t.http
      .get(`/api/projects/${projectId}/events/?distinct_id=reader&limit=1`)
      .set(owner.auth)
      .expect(200);
    const [event] = res.body.results as ListedEvent[];
    expect(event.uuid).toBe(uuids[5]);
    expect(event.properties).toMatchObject({
      n: 5,
      blob: BLOB,
      huge: { $truncated: true, bytes: HUGE.length + 2 },
      nested: { $truncated: true, bytes: HUGE.length + 12 },
    });
    expect(event.properties_truncated).toBe(true);
    const one = await t.http
      .get(`/api/projects/${projectId}/events/${uuids[5]}/`)
      .set(owner.auth)
      .expect(200);
    expect(one.body.properties).toMatchObject({ huge: HUGE, nested: { huge: HUGE } });
    expect(one.body.properties_truncated).toBe(false);
  });

  it('ends a page early at EVENTS_LIST_MAX_BYTES, and next starts at the first event left out', async () => {
    const first = await t.http
      .get(`/api/projects/${projectId}/events/?distinct_id=reader&limit=10`)
      .set(owner.auth)
      .expect(200);
    const page = first.body.results as ListedEvent[];
    // 64 KiB: events are kept while those before them hold less (~20 KB each), so 4 of the 6.
    expect(page.map((e) => e.properties.n)).toEqual([5, 4, 3, 2]);
    expect(page.slice(1).every((e) => !e.properties_truncated)).toBe(true);
    expect(first.body.count).toBe(6);
    const next = new URL(first.body.next as string);
    expect([next.searchParams.get('offset'), next.searchParams.get('limit')]).toEqual(['4', '10']);
    const rest = await t.http.get(`${next.pathname}${next.search}`).set(owner.auth).expect(200);
    expect((rest.body.results as ListedEvent[]).map((e) => e.properties.n)).toEqual([1, 0]);
    expect(rest.body.next).toBeNull();
  });

  it('lists one event past the page bound on its own rather than none', async () => {
    const res = await t.http
      .get(`/api/projects/${projectId}/events/?distinct_id=fat&limit=10`)
      .set(owner.auth)
      .expect(200);
    expect((res.body.results as ListedEvent[]).map((e) => e.properties.n)).toEqual([1]);
    expect((res.body.results as ListedEvent[])[0].properties_truncated).toBe(false);
    expect(new URL(res.body.next as string).searchParams.get('offset')).toBe('1');
  });
});
