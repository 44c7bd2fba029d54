import type pg from 'pg';
import { postCapture } from './capture-runner.js';
import { fetchOnce, type RequestSpec } from './load.js';

export interface StatementProfile {
  /** Statements per request. */
  perRequest: number;
  /** queryid → calls per request, with the statement's text. */
  byQuery: Map<string, { calls: number; query: string }>;
  /** Median latency of these requests, sent one at a time (no queueing), ms. */
  serialP50: number;
}

/**
 * The statements one side runs per request: pg_stat_statements is reset, `n` requests are sent one after the
 * other, and the calls recorded for the bench database are divided by `n`. Nothing else uses the bench
 * database meanwhile (the scheduler is off in the service).
 */
export async function profileStatements(
  db: pg.Client,
  baseUrl: string,
  spec: RequestSpec,
  headers: Record<string, string>,
  n = 20,
  offset = 0,
): Promise<StatementProfile> {
  await db.query('SELECT pg_stat_statements_reset()');
  const latencies: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const { status, body } = await fetchOnce(baseUrl, spec, headers, offset + i);
    latencies.push(performance.now() - started);
    if (status >= 300) throw new Error(`${spec.method} ${spec.path}: ${status} ${body.slice(0, 300)}`);
  }
  latencies.sort((a, b) => a - b);
  return readProfile(db, n, latencies[Math.floor(n / 2)]);
}

/**
 * As `profileStatements`, for capture: each of `bodies` POSTed to `path` one after the other (a capture
 * scenario's bodies, which every side must answer 200).
 */
export async function profileCaptureBodies(
  db: pg.Client,
  baseUrl: string,
  bodies: readonly Buffer[],
  path: string,
): Promise<StatementProfile> {
  await db.query('SELECT pg_stat_statements_reset()');
  const latencies: number[] = [];
  for (const body of bodies) {
    const started = performance.now();
    const res = await postCapture(baseUrl, body, undefined, path);
    latencies.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.body.slice(0, 300)}`);
  }
  latencies.sort((a, b) => a - b);
  return readProfile(db, bodies.length, latencies[Math.floor(bodies.length / 2)]);
}

/** The calls pg_stat_statements recorded for the bench database since its reset, per request of `n`. */
async function readProfile(db: pg.Client, n: number, serialP50: number): Promise<StatementProfile> {
  const { rows } = await db.query<{ queryid: string; calls: string; query: string }>(
    `SELECT queryid::text, calls::text, query FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND query NOT ILIKE '%pg_stat_statements%'`,
  );
  const byQuery = new Map<string, { calls: number; query: string }>();
  let total = 0;
  for (const row of rows) {
    total += Number(row.calls);
    byQuery.set(row.queryid, { calls: Number(row.calls) / n, query: row.query.replace(/\s+/g, ' ').trim() });
  }
  return { perRequest: total / n, byQuery, serialP50 };
}

/** Statements one side runs and the other does not (or not as often); empty when both run the same. */
export function statementDifferences(service: StatementProfile, baseline: StatementProfile): string[] {
  const out: string[] = [];
  for (const [id, s] of service.byQuery) {
    const b = baseline.byQuery.get(id);
    if (!b || Math.abs(b.calls - s.calls) > 0.01)
      out.push(`service ${s.calls}× vs baseline ${b?.calls ?? 0}×: ${s.query.slice(0, 160)}`);
  }
  for (const [id, b] of baseline.byQuery) {
    if (!service.byQuery.has(id)) out.push(`baseline only, ${b.calls}×: ${b.query.slice(0, 160)}`);
  }
  return out;
}

/** Two sides' statement profiles compared: the results file's `statements` and `serialP50`, and the log line. */
export interface StatementComparison {
  statements: { service: number; baseline: number; sameStatements: boolean; note: string | null };
  serialP50: { service: number; baseline: number };
  /** `<name>: 2.0 statements/request (service), 2.0 (baseline); the same statements` (or `; DIFFERENT: …`). */
  summary: string;
}

/**
 * The same statements (pg_stat_statements' query ids) as often on both sides, else what differs
 * (`statementDifferences`), for the capture scenarios (events and recordings) of scenario `name`.
 */
export function compareStatements(
  name: string,
  profiles: { service: StatementProfile; baseline: StatementProfile },
): StatementComparison {
  const { service, baseline } = profiles;
  const differences = statementDifferences(service, baseline);
  return {
    statements: {
      service: service.perRequest,
      baseline: baseline.perRequest,
      sameStatements: differences.length === 0,
      note: differences.length ? differences.join(' | ') : null,
    },
    serialP50: { service: service.serialP50, baseline: baseline.serialP50 },
    summary:
      `${name}: ${service.perRequest.toFixed(1)} statements/request (service), ` +
      `${baseline.perRequest.toFixed(1)} (baseline)` +
      (differences.length ? `; DIFFERENT: ${differences.join(' | ')}` : '; the same statements'),
  };
}
