import type pg from 'pg';
import { round } from './report.js';

/**
 * The events of the events list scenario (`events-list`): LIST_EVENTS events in the recordings' project, half a
 * second apart on 2026-11-02 (newest first from 2026-11-03T00:00Z; a day of its own, apart from the days of the
 * `recordings-filter` events, which end on 2026-11-01), each of the session of one of the recordings 990 to 1009
 * (`bench-0000990` …), one in twenty of them the session of recording 999, which the recordings' access rule hides
 * from the member (HIDDEN_START_URL): the member's list leaves those events out. Their distinct ids are the
 * seeded persons' (`person-<n>`), so each listed event carries its person. Kept while the bench database is;
 * rebuilt when LIST_EVENTS_VERSION or the project changes.
 */
export const LIST_EVENTS = 50_000;
const LIST_EVENTS_VERSION = '1';
const DAY = '2026-11-02';
const PARTITION = 'events_p20261102';

export async function seedListEvents(
  db: pg.Client,
  projectId: number,
  log: (m: string) => void,
): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS bench_list_events (fingerprint text NOT NULL)`);
  const fingerprint = `v${LIST_EVENTS_VERSION}-project-${projectId}-events-${LIST_EVENTS}`;
  const { rows } = await db.query<{ fingerprint: string }>('SELECT fingerprint FROM bench_list_events');
  if (rows[0]?.fingerprint === fingerprint) return;
  const started = Date.now();
  log(`events-list: seeding ${LIST_EVENTS} events on ${DAY}`);
  // The day's partition, as the service creates it (events.repository.ts createPartition), when absent.
  if (
    (await db.query<{ oid: string | null }>(`SELECT to_regclass($1)::text AS oid`, [PARTITION])).rows[0]
      .oid === null
  ) {
    await db.query(
      `CREATE TABLE ${PARTITION} PARTITION OF events FOR VALUES FROM ('${DAY}T00:00:00.000Z') TO ('2026-11-03T00:00:00.000Z')`,
    );
    await db.query(`CREATE UNIQUE INDEX ${PARTITION}_team_uuid_key ON ${PARTITION} (team_id, uuid)`);
  }
  await db.query('DELETE FROM bench_list_events');
  await db.query(`DELETE FROM ${PARTITION} WHERE team_id = $1`, [projectId]);
  await db.query(
    `INSERT INTO events (uuid, event, properties, "timestamp", created_at, team_id, distinct_id, person_id,
                         elements_chain, session_id, window_id)
     SELECT gen_random_uuid(), CASE WHEN i % 3 = 0 THEN '$autocapture' ELSE '$pageview' END,
            jsonb_build_object('$current_url', format('https://app.bench.test/page/%s', i % 1000),
                               '$session_id', format('bench-%s', lpad(g::text, 7, '0')), '$browser', 'Chrome',
                               '$lib', 'web', 'amount', i % 200),
            ts, ts, $1, format('person-%s', 1 + g % 100000), NULL,
            CASE WHEN i % 3 = 0 THEN 'button.btn:text="Buy"nth-child="1"' ELSE '' END,
            format('bench-%s', lpad(g::text, 7, '0')), format('window-%s', g)
       FROM generate_series(1, $2::int) i
      CROSS JOIN LATERAL (SELECT 990 + i % 20 AS g,
                                 timestamptz '2026-11-03T00:00:00Z' - i * interval '500 milliseconds' AS ts) t`,
    [projectId, LIST_EVENTS],
  );
  await db.query(`VACUUM ANALYZE ${PARTITION}`);
  await db.query('INSERT INTO bench_list_events (fingerprint) VALUES ($1)', [fingerprint]);
  log(`events-list: seeded in ${round((Date.now() - started) / 1000, 1)} s`);
}
