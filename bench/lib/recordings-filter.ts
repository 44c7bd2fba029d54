import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type pg from 'pg';
import { quantile } from './capture-runner.js';
import type { Server } from './processes.js';
import { round, table } from './report.js';

/**
 * The recordings list filtered by events (`recordings-filter`): 10 events per seeded recording (10,000,000 for
 * the 1,000,000 recordings of the seed's project), filtered list requests through the running service with the
 * bench's key, one at a time, timed (p50 / p95 per request), each answer's `count` checked against what the seed
 * made, and the plan of each request's statement checked (EXPLAIN: the expected indexes, no sequential scan of
 * the events or the recordings).
 */

/** Events per recording. */
export const EVENTS_PER_RECORDING = 10;
/** The target: p95 of every filtered request below this (ms). */
export const MAX_FILTER_P95_MS = 300;
/** Bumped whenever the events below change, so older seeded events are rebuilt. */
const EVENTS_VERSION = '1';
const DAY_MS = 24 * 3600_000;

/**
 * The custom event of recording `g` (its tenth event): `checkout started` in every 20th recording, `order placed`
 * (with an `amount` of g mod 200) in every 50th (g mod 50 = 1), `product viewed` in the others. Its other events:
 * four `$pageview`, four `$autocapture`, one `$pageleave`.
 */
export const CUSTOM_EVENT_SQL = `CASE WHEN g % 20 = 0 THEN 'checkout started' WHEN g % 50 = 1 THEN 'order placed' ELSE 'product viewed' END`;
/** Persons whose `plan` is `pro` (the others' is `free`): every tenth of the project's, by id. */
const PRO_PERSON_SQL = 'id % 10 = 0';

export interface FilterRequest {
  name: string;
  /** The kind of filter, for `expectedCount`. */
  kind: FilterKind;
  /** `date_from` of the request, or null for the whole project. */
  from: string | null;
  /** The list's query parameters (JSON values as text). */
  query: Record<string, string>;
  /** What the statement's plan must show: an index of the events by event name, or none of the events. */
  expects: 'events-by-name' | 'no-events';
}

export type FilterKind = 'had event' | 'had not' | 'event property' | 'person property';

const entity = (id: string, properties: unknown[] = []) =>
  JSON.stringify([{ id, type: 'events', ...(properties.length ? { properties } : {}) }]);

const KINDS: readonly {
  kind: FilterKind;
  query: Record<string, string>;
  expects: FilterRequest['expects'];
}[] = [
  { kind: 'had event', query: { events: entity('checkout started') }, expects: 'events-by-name' },
  { kind: 'had not', query: { exclude_events: entity('checkout started') }, expects: 'events-by-name' },
  {
    kind: 'event property',
    query: {
      events: entity('order placed', [{ key: 'amount', value: 150, operator: 'gt', type: 'event' }]),
    },
    expects: 'events-by-name',
  },
  {
    kind: 'person property',
    query: { properties: JSON.stringify([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }]) },
    expects: 'no-events',
  },
];

/**
 * The list's windows: the last 3 days of the seeded recordings (PostHog's recordings list always sends a
 * `date_from`, by default 3 days back), and the whole project (every one of the million recordings counted).
 */
export const WINDOWS: readonly { label: string; from: string | null }[] = [
  { label: '3 days', from: '2026-10-29T00:00:00.000Z' },
  { label: 'all', from: null },
];

/** The filtered requests: had an event, had not, an event's property, a person's property, in each window. */
export const FILTER_REQUESTS: readonly FilterRequest[] = WINDOWS.flatMap((w) =>
  KINDS.map((k) => ({
    name: `${k.kind}, ${w.label}`,
    kind: k.kind,
    from: w.from,
    query: w.from ? { date_from: w.from, ...k.query } : { ...k.query },
    expects: k.expects,
  })),
);

/**
 * The count each request must answer, from the seed's arithmetic: the `listed` recordings of the window are
 * recordings 1..listed (newest first; recording g's session is `bench-<g>`), those among them up to
 * `withEvents` have events; `proRecordings` of them have a `pro` person.
 */
export function expectedCount(
  kind: string,
  figures: { listed: number; withEvents: number; proRecordings: number },
): number {
  const withEvents = Math.min(figures.withEvents, figures.listed);
  const checkout = Math.floor(withEvents / 20);
  switch (kind) {
    case 'had event':
      return checkout;
    case 'had not':
      return figures.listed - checkout;
    case 'event property':
      // `order placed` (g ≡ 1 mod 50) with an amount (g mod 200) above 150: g ≡ 151 (mod 200).
      return withEvents >= 151 ? Math.floor((withEvents - 151) / 200) + 1 : 0;
    case 'person property':
      return figures.proRecordings;
    default:
      throw new Error(`no expected count for '${kind}'`);
  }
}

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan (EXPLAIN (FORMAT JSON)), depth first. */
export function planNodes(root: PlanNode): PlanNode[] {
  const out: PlanNode[] = [];
  const walk = (node: PlanNode) => {
    out.push(node);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(root);
  return out;
}

const isEvents = (relation: string | undefined) =>
  relation === 'events' || /^events_p\d{8}$/.test(relation ?? '');

/**
 * What is wrong with a request's plan, if anything: a sequential scan of the events or the recordings (but of
 * `smallRelations`, tables of a few pages such as an empty day partition); for `events-by-name`, no scan of the events by the `(team_id, event, timestamp)` index, or no probe of the recordings by their `(team_id, session_id) INCLUDE (start_time)` index (the sessions of the named event: without it the count matches every recording against them); for
 * `no-events`, any scan of the events. Also the indexes it uses, for the report.
 */
export function checkPlan(
  root: PlanNode,
  expects: FilterRequest['expects'],
  smallRelations?: ReadonlySet<string>,
): { problems: string[]; indexes: string[] } {
  const nodes = planNodes(root);
  const problems: string[] = [];
  const indexes = new Set<string>();
  for (const node of nodes) {
    const relation = node['Relation Name'];
    if (node['Index Name']) {
      indexes.add(
        isEvents(relation) ? node['Index Name'].replace(/^events_p\d{8}_/, 'events_p*_') : node['Index Name'],
      );
    }
    // A table of a few pages (an empty day partition) is read whole whatever the plan: not a problem.
    const small = relation !== undefined && (smallRelations?.has(relation) ?? false);
    if (
      node['Node Type'] === 'Seq Scan' &&
      !small &&
      (isEvents(relation) || relation === 'session_recordings')
    ) {
      problems.push(`sequential scan of ${relation}`);
    }
  }
  const eventScans = nodes.filter((n) => isEvents(n['Relation Name']));
  if (expects === 'events-by-name') {
    if (!eventScans.some((n) => /team_id_event_timestamp(_session_id)?_idx$/.test(n['Index Name'] ?? ''))) {
      problems.push('the events are not read by their (team_id, event, timestamp) index');
    }
    if (
      !nodes.some(
        (n) =>
          n['Relation Name'] === 'session_recordings' &&
          n['Index Name'] === 'session_recordings_team_session_live_idx',
      )
    ) {
      problems.push('the recordings of the sessions are not probed by their (team_id, session_id) index');
    }
  } else if (eventScans.length) {
    problems.push('the events are read although no event filter is given');
  }
  return { problems: [...new Set(problems)], indexes: [...indexes].sort() };
}

export interface FilterRequestResult {
  name: string;
  query: Record<string, string>;
  count: number;
  expectedCount: number;
  samples: number;
  p50: number;
  p95: number;
  max: number;
  indexes: string[];
  planProblems: string[];
}

export interface RecordingsFilterResult {
  recordings: number;
  events: number;
  requests: FilterRequestResult[];
  /** p95 over every request of every kind. */
  p95: number;
}

/** The scale of the seeded events: how many of the project's recordings (the newest first) have events. */
export function eventsScale(env: Record<string, string | undefined>, recordings: number): number {
  const raw = env.BENCH_FILTER_RECORDINGS;
  if (raw === undefined || raw === '') return recordings;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > recordings) {
    throw new Error(`BENCH_FILTER_RECORDINGS must be an integer from 1 to ${recordings}, got '${raw}'`);
  }
  return Number(raw);
}

/**
 * Seeds the events of recordings 1..`withEvents` of the project (kept while the bench database is, rebuilt when
 * the scale or EVENTS_VERSION changes): one table per day of events, filled by one `INSERT … SELECT
 * generate_series` each, then attached to `events` as its partition (which builds the parent's indexes on it
 * in bulk) with the unique (team_id, uuid) index the service gives every partition; then every tenth person's
 * `plan` is set to `pro`.
 */
async function seedEvents(
  db: pg.Client,
  projectId: number,
  withEvents: number,
  log: (m: string) => void,
): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS bench_filter_events (fingerprint text NOT NULL)`);
  const fingerprint = `v${EVENTS_VERSION}-project-${projectId}-recordings-${withEvents}`;
  const { rows } = await db.query<{ fingerprint: string }>('SELECT fingerprint FROM bench_filter_events');
  if (rows[0]?.fingerprint === fingerprint) return;
  const started = Date.now();
  log(`recordings-filter: seeding ${withEvents * EVENTS_PER_RECORDING} events of ${withEvents} recordings`);
  // Recording g starts at 2026-11-01 - 2g s and lasts 10 + g % 600 s (seed.ts); its events lie within it.
  const first = Date.parse('2026-11-01T00:00:00Z') - 2000 * withEvents;
  const last = Date.parse('2026-11-01T00:00:00Z');
  const days: number[] = [];
  for (let d = Math.floor(first / DAY_MS); d <= Math.floor(last / DAY_MS); d++) days.push(d);
  // Drop what an earlier seed left: every partition of the project's days (the bench database holds no other
  // events in them).
  for (const d of days) await db.query(`DROP TABLE IF EXISTS ${partition(d)}`);
  await db.query('DELETE FROM bench_filter_events');
  const [{ persons }] = (
    await db.query<{ persons: number }>(`SELECT count(*)::int AS persons FROM persons WHERE team_id = $1`, [
      projectId,
    ])
  ).rows;
  for (const d of days) {
    const name = partition(d);
    const from = new Date(d * DAY_MS).toISOString();
    const to = new Date((d + 1) * DAY_MS).toISOString();
    // The recordings whose events may fall on this day (start within the day, give or take their length).
    const gHigh = Math.min(withEvents, Math.ceil((last - d * DAY_MS + 610_000) / 2000) + 1);
    const gLow = Math.max(1, Math.floor((last - (d + 1) * DAY_MS) / 2000));
    await db.query(`CREATE TABLE ${name} (LIKE events INCLUDING DEFAULTS)`);
    const t = Date.now();
    const inserted = await db.query(
      `INSERT INTO ${name} (uuid, event, properties, "timestamp", created_at, team_id, distinct_id, person_id,
                           elements_chain, session_id, window_id)
       SELECT gen_random_uuid(), ev.event, ev.properties, ev.ts, ev.ts, $1, format('person-%s', 1 + g % $2::int), NULL,
              CASE WHEN ev.event = '$autocapture' THEN 'button.btn:text="Buy"nth-child="1"' ELSE '' END,
              format('bench-%s', lpad(g::text, 7, '0')), format('window-%s', g)
         FROM generate_series($3::int, $4::int) g
        CROSS JOIN generate_series(0, ${EVENTS_PER_RECORDING - 1}) k
        CROSS JOIN LATERAL (
          SELECT timestamptz '2026-11-01T00:00:00Z' - g * interval '2 seconds'
                   + k * (10 + g % 600) * interval '100 milliseconds' AS ts,
                 CASE WHEN k < 4 THEN '$pageview' WHEN k < 8 THEN '$autocapture' WHEN k = 8 THEN '$pageleave'
                      ELSE ${CUSTOM_EVENT_SQL} END AS event
        ) t
        CROSS JOIN LATERAL (
          SELECT t.ts, t.event,
                 CASE WHEN k < 4 THEN jsonb_build_object('$current_url', format('https://app.bench.test/page/%s', (g + k) % 1000),
                                                          '$session_id', format('bench-%s', lpad(g::text, 7, '0')), '$browser', 'Chrome')
                      WHEN k < 8 THEN jsonb_build_object('$event_type', 'click', '$session_id', format('bench-%s', lpad(g::text, 7, '0')))
                      WHEN k = 8 THEN jsonb_build_object('$session_id', format('bench-%s', lpad(g::text, 7, '0')))
                      ELSE jsonb_build_object('amount', g % 200, 'plan', CASE WHEN g % 3 = 0 THEN 'pro' ELSE 'free' END,
                                              '$session_id', format('bench-%s', lpad(g::text, 7, '0'))) END AS properties
        ) ev
        WHERE ev.ts >= $5::timestamptz AND ev.ts < $6::timestamptz`,
      [projectId, persons, gLow, gHigh, from, to],
    );
    await db.query(`ALTER TABLE events ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
    await db.query(`CREATE UNIQUE INDEX ${name}_team_uuid_key ON ${name} (team_id, uuid)`);
    log(`recordings-filter: ${name}: ${inserted.rowCount} events in ${Date.now() - t} ms`);
  }
  await db.query(
    `UPDATE persons SET properties = properties || jsonb_build_object('plan', CASE WHEN ${PRO_PERSON_SQL} THEN 'pro' ELSE 'free' END)
      WHERE team_id = $1`,
    [projectId],
  );
  await db.query('VACUUM ANALYZE events, persons');
  await db.query('INSERT INTO bench_filter_events (fingerprint) VALUES ($1)', [fingerprint]);
  log(`recordings-filter: seeded in ${round((Date.now() - started) / 1000, 1)} s`);
}

const partition = (day: number) =>
  `events_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;

/**
 * `buildListQuery` of the built service (session-recordings.repository.ts): its first argument is the events
 * store's "sessions matching an event filter" (the PostgreSQL store's, `POSTGRES_SESSION_EVENTS`).
 */
type BuildListQuery = (
  sessionEvents: unknown,
  teamId: number,
  userId: number | null,
  filters: unknown,
  page: { limit: number; offset: number },
  retainedFrom: Date | null,
) => { sql: string; params: unknown[] };

/** Runs the scenario against a running service (see the module's comment). */
export async function benchRecordingsFilter(options: {
  root: string;
  db: pg.Client;
  service: Server;
  apiKey: string;
  projectId: number;
  recordings: number;
  withEvents: number;
  /** Timed requests per kind. */
  samples: number;
  log: (m: string) => void;
}): Promise<RecordingsFilterResult> {
  const { db, log } = options;
  await seedEvents(db, options.projectId, options.withEvents, log);
  const figuresOf = async (from: string | null) =>
    (
      await db.query<{ listed: number; pro: number }>(
        `SELECT (SELECT count(*)::int FROM session_recordings
                  WHERE team_id = $1 AND deleted_at IS NULL AND start_time >= coalesce($2::timestamptz, '-infinity')) AS listed,
                (SELECT count(*)::int FROM session_recordings r JOIN persons p ON p.id = r.person_id
                  WHERE r.team_id = $1 AND r.deleted_at IS NULL AND r.start_time >= coalesce($2::timestamptz, '-infinity')
                    AND p.properties->>'plan' = 'pro') AS pro`,
        [options.projectId, from],
      )
    ).rows[0];
  const recordings = (await figuresOf(null)).listed;
  // The project's events (index-only on (team_id, timestamp); the export scenario's are in another project).
  const eventsCount = (
    await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE team_id = $1', [
      options.projectId,
    ])
  ).rows[0].n;
  // The statement the service sends for a request, built by the service's own code (dist/).
  const load = (path: string) => import(pathToFileURL(join(options.root, 'dist', path)).href);
  const { buildListQuery } = (await load('session-recordings/session-recordings.repository.js')) as {
    buildListQuery: BuildListQuery;
  };
  const { POSTGRES_SESSION_EVENTS } = (await load('events/events-session-filters.js')) as {
    POSTGRES_SESSION_EVENTS: unknown;
  };
  const { parseRecordingFilters } = (await load('session-recordings/reads/recording-filters.js')) as {
    parseRecordingFilters: (query: Record<string, string>, now: Date) => unknown;
  };
  const headers = { Authorization: `Bearer ${options.apiKey}` };
  const results: FilterRequestResult[] = [];
  const all: number[] = [];
  for (const request of FILTER_REQUESTS) {
    const url = `${options.service.url}/api/projects/${options.projectId}/session_recordings?${new URLSearchParams(request.query).toString()}`;
    const get = async () => {
      const started = performance.now();
      const res = await fetch(url, { headers });
      const text = await res.text();
      const ms = performance.now() - started;
      if (res.status !== 200)
        throw new Error(`recordings-filter ${request.name}: ${res.status} ${text.slice(0, 300)}`);
      return { ms, body: JSON.parse(text) as { count: number; results: unknown[] } };
    };
    const first = await get(); // warms the caches; its answer is checked
    const window = await figuresOf(request.from);
    const expected = expectedCount(request.kind, {
      listed: window.listed,
      withEvents: options.withEvents,
      proRecordings: window.pro,
    });
    if (first.body.count !== expected) {
      throw new Error(`recordings-filter ${request.name}: count ${first.body.count}, expected ${expected}`);
    }
    if (first.body.results.length !== Math.min(100, expected)) {
      throw new Error(
        `recordings-filter ${request.name}: ${first.body.results.length} results on the first page`,
      );
    }
    const times: number[] = [];
    for (let i = 0; i < options.samples; i++) times.push((await get()).ms);
    times.sort((a, b) => a - b);
    all.push(...times);
    // The plan of the same statement, as the service builds it (its clock: now, the bench's retention).
    const filters = parseRecordingFilters(request.query, new Date());
    const cutoff = new Date(Date.now() - 3650 * DAY_MS);
    const { sql, params } = buildListQuery(
      POSTGRES_SESSION_EVENTS,
      options.projectId,
      null,
      filters,
      { limit: 100, offset: 0 },
      cutoff,
    );
    const plan = (
      await db.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${sql}`, params)
    ).rows[0]['QUERY PLAN'][0].Plan;
    const small = new Set(
      (
        await db.query<{ relname: string }>(
          `SELECT c.relname FROM pg_class c WHERE c.relkind = 'r' AND c.relpages < 10
              AND (c.relname = 'session_recordings' OR c.relname LIKE 'events_p%')`,
        )
      ).rows.map((r) => r.relname),
    );
    const { problems, indexes } = checkPlan(plan, request.expects, small);
    const result: FilterRequestResult = {
      name: request.name,
      query: request.query,
      count: first.body.count,
      expectedCount: expected,
      samples: times.length,
      p50: round(quantile(times, 0.5), 1),
      p95: round(quantile(times, 0.95), 1),
      max: round(times[times.length - 1], 1),
      indexes,
      planProblems: problems,
    };
    results.push(result);
    log(
      `recordings-filter ${request.name}: count ${result.count}, p50 ${result.p50} ms, p95 ${result.p95} ms` +
        (problems.length ? `; PLAN: ${problems.join('; ')}` : '; plan as expected'),
    );
  }
  all.sort((a, b) => a - b);
  return { recordings, events: eventsCount, requests: results, p95: round(quantile(all, 0.95), 1) };
}

/** The scenario's table. */
export function formatRecordingsFilterTable(r: RecordingsFilterResult): string {
  return [
    table(
      ['recordings list filtered by', 'count', 'requests', 'p50 ms', 'p95 ms', 'max ms', 'plan'],
      r.requests.map((q) => [
        q.name,
        q.count,
        q.samples,
        q.p50,
        q.p95,
        q.max,
        q.planProblems.length ? q.planProblems.join('; ') : `as expected (${q.indexes.join(', ')})`,
      ]),
    ),
    '',
    `${r.recordings} recordings and ${r.events} events in the project; one request at a time, counts checked ` +
      `against the seed; p95 of all requests ${r.p95} ms (target < ${MAX_FILTER_P95_MS} ms).`,
  ].join('\n');
}
