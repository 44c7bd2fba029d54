import { randomBytes, randomUUID } from 'node:crypto';
import { TransactionHost } from '../../src/database/transactions.js';
import { EventsRepository } from '../../src/events/events.repository.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { eventsToastReads } from '../support/toast-reads.js';
import { onCitus } from '../support/test-database.js';

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

  // On Citus the events are read on the workers, whose counters the coordinator's transaction does not see.
  (onCitus() ? it.skip : it)(
    "reads each event's stored properties once, and measures the bounded ones as PostgreSQL writes them",
    async () => {
      // Keys whose JSON text is escaped, and values of every JSON type, around incompressible fillers that PostgreSQL
      // stores out of line (TOAST): one value over 64 KiB (cut), 100 values of 3 KB (300 KB in all, none cut),
      // one of 30 KB (within the bound), and a small event kept in its row.
      const odd = {
        'quote"key': 'a "quoted" value',
        'back\\slash': 'C:\\path',
        'ünïcødé ключ 🗝': 'ß✓',
        'tab\tkey': [1, 2.5, null, true, { deep: ['x'] }],
        empty: {},
      };
      const hex = (bytes: number) => randomBytes(bytes / 2).toString('hex');
      const shapes: Record<string, unknown>[] = [
        { ...odd, cut: hex(300_000) },
        { ...odd, ...Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`part${i}`, hex(3_000)])) },
        { ...odd, within: hex(30_000) },
        { ...odd },
      ];
      const ids = shapes.map(() => randomUUID());
      await t.http
        .post('/batch/')
        .set('Content-Type', 'application/json')
        .send({
          api_key: token,
          batch: shapes.map((properties, i) => ({
            event: 'stored',
            uuid: ids[i],
            distinct_id: 'toasty',
            timestamp: new Date(base + i * 1000).toISOString(),
            properties,
          })),
        })
        .expect(200);
      const events = t.app.get(EventsRepository);
      const {
        result: page,
        pages,
        fetched,
      } = await eventsToastReads(t.dataSource, t.app.get(TransactionHost), () =>
        events.list(projectId, new Date(0), { distinctIds: ['toasty'] }, 10, 0, 10_000, 64 * 2 ** 20),
      );
      const rows = new Map(page.rows.map((row) => [row.uuid, row]));
      expect(rows.size).toBe(4);
      // The cut value alone is replaced; everything within the bound comes back as stored (as sent, with the
      // address ingestion adds).
      const { cut: _cut, ...kept } = shapes[0];
      expect(rows.get(ids[0])?.properties).toEqual({
        ...kept,
        $ip: '127.0.0.1',
        cut: { $truncated: true, bytes: 300_002 },
      });
      expect(rows.get(ids[0])?.propertiesTruncated).toBe(true);
      for (const i of [1, 2, 3]) {
        expect(rows.get(ids[i])?.properties).toEqual({ ...shapes[i], $ip: '127.0.0.1' });
        expect(rows.get(ids[i])?.propertiesTruncated).toBe(false);
      }
      // Each row's size, summed from its parts, is that of the JSON text PostgreSQL writes for what it returns.
      for (const row of page.rows as ((typeof page.rows)[number] & { bytes: string })[]) {
        const [{ n }]: { n: number }[] = await t.dataSource.query(
          `SELECT octet_length($1::jsonb::text) + octet_length($2::text) AS n`,
          [JSON.stringify(row.properties), row.elementsChain ?? ''],
        );
        expect(Number(row.bytes)).toBe(n);
      }
      // About 630 KB out of line, each page read once (twice before: measured whole, then read again).
      expect(pages).toBeGreaterThan(60);
      expect(fetched).toBeGreaterThanOrEqual(0.8 * pages);
      expect(fetched).toBeLessThan(1.4 * pages);
    },
  );
});
