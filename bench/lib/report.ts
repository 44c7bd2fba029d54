import type { RoundLoad } from './machine-load.js';
/** Results of a bench run, the targets they are held to, and their rendering as Markdown tables. */

export interface LoadStats {
  /** Mean requests per second over the measured seconds. */
  rps: number;
  p50: number;
  p99: number;
  /** Connection errors and timeouts plus non-2xx answers. */
  errors: number;
  requests: number;
  /** CPU time of the server process per request (user + system), ms. */
  cpuMsPerRequest: number;
  /** The part of `cpuMsPerRequest` spent by V8's worker threads (garbage collection, compilation), ms. */
  v8CpuMsPerRequest?: number;
  /**
   * The part of `cpuMsPerRequest` spent in the kernel (system calls: the socket reads and writes to the client and
   * to PostgreSQL, the request log's writes), ms; the rest is user time, the process's own work.
   */
  systemCpuMsPerRequest?: number;
  /**
   * CPU time of the PostgreSQL server (every process of it) per request while this side was loaded, ms: the
   * database's share of the same statements (on a server shared with other work, BENCH_DATABASE_URL, that work's
   * too). Absent when the server runs elsewhere.
   */
  pgCpuMsPerRequest?: number;
  /** Largest RSS of the server process during the measured load, MB. */
  rssMaxMb: number;
}

export interface HttpScenarioResult {
  name: string;
  description: string;
  /** A list or retrieve scenario, held to the ratio targets (the write path is reported only). */
  read: boolean;
  service: LoadStats;
  baseline: LoadStats;
  /** Each round's figures, in the order they ran. */
  rounds: HttpRound[];
  /** SQL statements per request on each side (pg_stat_statements), and whether both ran the same statements. */
  statements: { service: number; baseline: number; sameStatements: boolean; note: string | null } | null;
  /** Median latency of requests sent one at a time (no queueing: the cost of one request), ms. */
  serialP50: { service: number; baseline: number } | null;
}

/** One round of an HTTP scenario: each side loaded in turn. */
export interface HttpRound {
  first: 'service' | 'baseline';
  service: LoadStats;
  baseline: LoadStats;
  /** The machine's load while each side was measured (absent in results of earlier runs). */
  load?: { service: RoundLoad; baseline: RoundLoad };
  /** Earlier measurements of this round set aside because other work took the cores meanwhile. */
  setAside?: HttpRound[];
}

export interface SchedulerResult {
  exports: number;
  /** Wall time of each single tick (each on freshly reset due exports), ms. */
  tickMs: number[];
  /** CPU time of the PostgreSQL backend running each tick, ms (null when the server is not local). */
  tickPostgresCpuMs: number[] | null;
  runsPerTick: number;
  statementsPerTick: number;
  concurrentTicks: number;
  concurrentWallMs: number;
  concurrentRunsCreated: number;
  duplicateRuns: number;
  /**
   * After each single tick, the dispatch of its runs (their jobs and "Run created" log lines, which workers write
   * after the tick): wall time and the PostgreSQL backend's CPU time, ms (CPU null when the server is not local).
   */
  dispatchMs: number[];
  dispatchPostgresCpuMs: number[] | null;
  /** After the concurrent ticks' runs were dispatched: runs without exactly one job, and without one log line. */
  runsWithoutJob: number;
  runsWithoutLog: number;
}

export interface CaptureResult {
  /** `$snapshot` events of one session per request. */
  events: number;
  /** Wall time of each request, from sending to the 200, ms. */
  wallMs: number[];
  /** The service's CPU time during each request, ms. */
  serviceCpuMs: number[];
}

import type { StoreCounts } from './store-proxy.js';

/** One side's figures under the capture load (posthog-js batches to POST /s/). */
export interface CaptureLoadStats {
  requests: number;
  rps: number;
  /** rrweb events of the answered requests per second. */
  eventsPerSec: number;
  /** Compressed request bytes received per second, MB (10^6 bytes). */
  mbPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of the server process per request (user + system), ms. */
  cpuMsPerRequest: number;
  /** The part of `cpuMsPerRequest` spent by V8's worker threads (garbage collection, compilation), ms. */
  v8CpuMsPerRequest?: number;
  rssMaxMb: number;
  /** rrweb events sent in answered requests, and the events the recordings of the load count afterwards. */
  eventsSent: number;
  eventsStored: number;
  /** Requests this side sent to the object store during the measured load (capture-s3), and over how long. */
  store?: { requests: StoreCounts; seconds: number } | null;
}

/**
 * Playing one long recording from packed storage as the player loads it (the list of sources, the first source
 * alone, then ranges of 2, 4, 8 and at most 16 sources): the time to its first frame and the store's requests.
 */
export interface PlaybackResult {
  /** Minutes between the recording's first and last event. */
  recordingMinutes: number;
  sources: number;
  /** Packed objects its chunks are in. */
  objects: number;
  /** Snapshot API requests of one whole load. */
  apiRequests: number;
  /** Time to first frame (the list, then the first source with the full snapshot, answered), ms: median, max. */
  firstFrameMs: { p50: number; max: number; runs: number };
  /** Time to read the whole recording, ms (median of the runs). */
  wholeMs: number;
  /** Requests to the object store of one whole load, and per minute of recording played. */
  requests: StoreCounts;
  perRecordingMinute: { put: number; get: number };
  /** Every event came back, in order, as captured. */
  verified: boolean;
  /** Packer passes that failed (their read-back differed, the store refused) and were run again. */
  failedPasses?: number;
}

export interface CaptureLoadResult {
  name: string;
  description: string;
  storage: 'postgres' | 's3';
  /** The service's object layout (capture-s3): `packed` (the baseline stores per-chunk objects). */
  layout?: 'packed' | 'per-chunk' | null;
  /** capture-s3: one 30-minute recording played from packed storage. */
  playback?: PlaybackResult | null;
  service: CaptureLoadStats;
  baseline: CaptureLoadStats;
  rounds: { first: 'service' | 'baseline'; service: CaptureLoadStats; baseline: CaptureLoadStats }[];
  /** SQL statements per request on each side (pg_stat_statements), and whether both ran the same statements. */
  statements: { service: number; baseline: number; sameStatements: boolean; note: string | null } | null;
  /** Median latency of capture requests sent one at a time, ms. */
  serialP50: { service: number; baseline: number } | null;
  /** What the check session stored on each side was compared and found equal (fields, keys, chunk lines). */
  sameStored: boolean;
}

/** Rows per table of a set of recordings (the recordings, and what belongs to them). */
export interface PurgeRows {
  recordings: number;
  snapshotChunks: number;
  eventKeys: number;
  views: number;
  sharing: number;
}

/** Latencies of requests sent one at a time, ms. */
export interface LatencySummary {
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

/** The retention purge (`RecordingRetentionService.purgeBatch` until nothing expired is left). */
export interface RecordingsPurgeResult {
  /**
   * Where the recordings' chunks are: their rows (`rows`, as with RECORDING_STORAGE=postgres) or ranges of
   * packed objects in an S3-protocol server, each recording with a data key (`packed`).
   */
  layout?: 'rows' | 'packed';
  /** `packed`: the objects created, those left after the purge, and the purge's requests to the store. */
  store?: { objects: number; objectsLeft: number; requests: StoreCounts } | null;
  /** RECORDING_PURGE_BATCH_SIZE (recordings per transaction). */
  batchSize: number;
  /** The purge's clock and the project's retention cutoff at it (ISO). */
  clock: string;
  cutoff: string;
  /** Rows created for the expired recordings (all deleted) and for the live ones (all kept). */
  expired: PurgeRows;
  live: PurgeRows;
  /** Time to create the rows (set-based SQL), ms. */
  setupMs: number;
  /** Wall time from the first batch to the last (the empty one that ends the purge excluded), ms. */
  wallMs: number;
  /** Transactions that deleted recordings. */
  batches: number;
  /** Wall time of one batch (one transaction, holding the project's counter lock), ms. */
  batchMs: { p50: number; max: number };
  /** Statements the purge sent per batch (transaction control included). */
  statementsPerBatch: number;
  /** CPU time of the PostgreSQL backend that ran the batches, ms (null when the server is not local). */
  postgresCpuMs: number | null;
  recordingsPerSec: number;
  /** Rows deleted in every table (recordings, chunks, event keys, views, sharing), and per second. */
  rowsDeleted: number;
  rowsPerSec: number;
  /** What the service reported, summed over the batches. */
  purged: {
    recordings: number;
    snapshotChunks: number;
    objects: number;
    objectsLeft: number;
    batches: number;
  };
  /** POST /s/ requests of new sessions to the running service, one at a time, before and during the purge. */
  capture: { idle: LatencySummary; duringPurge: LatencySummary } | null;
  /** What the check after the purge found wrong (empty: exactly the expired rows are gone). */
  problems: string[];
}

export interface MemoryResult {
  idleMb: number;
  maxUnderLoadMb: number;
  endOfLoadMb: number;
}

export interface Target {
  name: string;
  value: number;
  limit: string;
  met: boolean;
  /** By how much it is missed, when it is. */
  note: string | null;
  /** Why it is missed (the analysis behind it, see docs/performance.md), when it is. */
  reason?: string;
}

/**
 * Why a target can be missed, from the profiles and query plans taken while tuning (docs/performance.md). Keyed
 * by the kind of target; attached to the missed targets of a run.
 */
export const MISS_REASONS = {
  ratio:
    'Per request the service spends more CPU than the baseline (see the CPU ms/req column) in the layers the ' +
    'baseline does not have: the Nest pipeline (router, guards, pipes, interceptors, rxjs), Express routing and ' +
    "middleware, the request log (pino-http), TypeORM's query runner and the garbage they make, none above a " +
    'tenth of its CPU (docs/performance.md has the profile). The SQL is the same on both sides. When the cores are ' +
    'shared with other work, the side that needs more CPU per request loses most, so small answers (retrieve) and ' +
    'a loaded machine show the lowest ratios.',
  recordingsP50:
    'At 10 connections on 2 shared cores the p50 is mostly queueing behind CPU (both sides are CPU-bound); one ' +
    'request alone takes the serial p50 column. The statement reads an index range and the maintained counter, ' +
    'never the million rows.',
  scheduler:
    'The tick locks 100,000 exports, inserts 100,000 runs and moves 100,000 watermarks (their jobs and log lines ' +
    'are written after it, by the dispatch: column "dispatch ms"): run inserts with their index entries and ' +
    'foreign-key checks, the watermark updates and the lock make up its PostgreSQL CPU time (column "PostgreSQL ' +
    'CPU ms"); the wall time adds what the machine\'s other processes take.',
  capture:
    'Per request the service spends more CPU than the baseline (CPU ms/req): the same statements, gzip and ' +
    'JSON work, plus Nest and Express, the streaming bounded JSON parser (which yields to the event loop), ' +
    "TypeORM's query runner and the request log. The cores are shared with the load generator and PostgreSQL.",
  purge:
    'Each batch is one transaction: the expired candidates from the list index, the counter lock, the recordings ' +
    'locked FOR UPDATE SKIP LOCKED, the chunks deleted by (team_id, session_id), then the recordings, whose ' +
    'event keys, views and sharing go by ON DELETE CASCADE (a per-row trigger each) and whose counter follows ' +
    'by a statement trigger. Every deleted row also costs its index entries; the wall time adds what the ' +
    "machine's other processes take (compare the PostgreSQL CPU column).",
  rss:
    "The resident set is the V8 heap as sized by the Deployment's NODE_OPTIONS (old generation and semi-spaces) " +
    'plus code and buffers; above the target, check that the bench read both flags from deploy/k8s/base/' +
    'deployment.yaml: without --max-semi-space-size Node 24 grows the young generation to three 64 MB semi-spaces.',
} as const;

/**
 * Ratio targets of the read scenarios (issue 40, item 1): ≥ 0.8× the baseline's req/s, p99 ≤ 1.6× the baseline's
 * and CPU per request ≤ 1.3× the baseline's, each scenario on its own.
 */
export const MIN_READ_RPS_RATIO = 0.8;
export const MAX_READ_P99_RATIO = 1.6;
export const MAX_READ_CPU_RATIO = 1.3;
/** The writes' target (issue 40, item 2): invite creation and organization PATCH ≥ 0.75× the baseline's req/s. */
export const MIN_WRITE_RPS_RATIO = 0.75;
/** The capture load's target: events/s ≥ 0.7× the baseline's. */
export const MIN_CAPTURE_RPS_RATIO = 0.7;
export const RECORDINGS_LIST_P50_MS = 50;
export const SCHEDULER_TICK_MS = 3000;
export const RSS_MB = 250;
export const CAPTURE_MS = 2000;
/** Events/s of capture-s3 (packed) ÷ those of capture-postgres, the service's, in the same run. */
export const MIN_S3_CAPTURE_RATIO = 0.9;
/** Recordings the retention purge deletes per second (with their chunks, keys, views and sharing). */
export const PURGE_RECORDINGS_PER_SEC = 5000;

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Events per second of the service ÷ the baseline's under the capture load. */
export function eventsRatio(r: CaptureLoadResult): number {
  return r.baseline.eventsPerSec > 0 ? r.service.eventsPerSec / r.baseline.eventsPerSec : 0;
}

/** No errors on either side of a scenario. */
function errorsTarget(r: {
  name: string;
  service: { errors: number };
  baseline: { errors: number };
}): Target {
  const errors = r.service.errors + r.baseline.errors;
  return {
    name: `${r.name}: errors`,
    value: errors,
    limit: '= 0',
    met: errors === 0,
    note: errors ? `${r.service.errors} errors on the service, ${r.baseline.errors} on the baseline` : null,
  };
}

/**
 * The capture load's targets: no errors, every answered event stored once, events/s ≥ 0.7× the baseline's, the
 * service's RSS below RSS_MB.
 */
export function captureLoadTargets(results: readonly CaptureLoadResult[]): Target[] {
  const targets: Target[] = [];
  for (const r of results) {
    targets.push(errorsTarget(r));
    const missing = (['service', 'baseline'] as const).filter(
      (side) => r[side].eventsStored !== r[side].eventsSent,
    );
    targets.push({
      name: `${r.name}: rrweb events stored ÷ answered`,
      value: round(r.service.eventsSent ? r.service.eventsStored / r.service.eventsSent : 0, 3),
      limit: '= 1',
      met: missing.length === 0,
      note: missing.length
        ? missing.map((side) => `${side}: ${r[side].eventsStored} of ${r[side].eventsSent}`).join('; ')
        : null,
    });
    targets.push(
      atLeast(`${r.name}: events/s ratio`, eventsRatio(r), MIN_CAPTURE_RPS_RATIO, MISS_REASONS.capture),
    );
    targets.push(rssTarget(`${r.name}: service RSS under load (MB, max)`, r.service.rssMaxMb));
  }
  const pg = results.find((r) => r.storage === 'postgres');
  const s3 = results.find((r) => r.storage === 's3');
  if (pg && s3) {
    const ratio = pg.service.eventsPerSec > 0 ? s3.service.eventsPerSec / pg.service.eventsPerSec : 0;
    targets.push(
      atLeast(
        `${s3.name} (${s3.layout ?? 'per-chunk'}) events/s ÷ ${pg.name} events/s, the service's`,
        ratio,
        MIN_S3_CAPTURE_RATIO,
        null,
      ),
    );
  }
  for (const r of results) {
    if (!r.playback) continue;
    targets.push({
      name: `${r.name}: ${round(r.playback.recordingMinutes, 0)}-minute recording played back event for event`,
      value: r.playback.verified ? 1 : 0,
      limit: '= 1',
      met: r.playback.verified,
      note: null,
    });
  }
  return targets;
}

/** Requests per minute of `count` over `seconds`. */
export const perMinute = (count: number, seconds: number): number =>
  seconds > 0 ? (count * 60) / seconds : 0;

/**
 * The object store's requests: per minute of capture load for each side of capture-s3 (the service packs, the
 * baseline stores one object per chunk), and per minute of recording for the playback.
 */
export function formatStoreRequestsTable(
  results: readonly CaptureLoadResult[],
  purge: RecordingsPurgeResult | null = null,
): string {
  const rows: (string | number)[][] = [];
  if (purge?.store) {
    const r = purge.store.requests;
    const seconds = purge.wallMs / 1000;
    rows.push([
      `recordings-purge (packed): ${purge.purged.recordings} recordings, ${purge.purged.objects} objects deleted`,
      round(perMinute(r.put, seconds), 1),
      round(perMinute(r.get, seconds), 1),
      round(perMinute(r.delete + r.other, seconds), 1),
      `per minute of purge (${round(seconds, 1)} s; ${r.delete} DeleteObjects requests)`,
    ]);
  }
  for (const r of results) {
    for (const side of ['service', 'baseline'] as const) {
      const st = r[side].store;
      if (!st) continue;
      rows.push([
        `${r.name}: capture, ${side}${side === 'service' ? ` (${r.layout ?? 'per-chunk'})` : ' (per-chunk)'}`,
        round(perMinute(st.requests.put, st.seconds), 1),
        round(perMinute(st.requests.get, st.seconds), 1),
        round(perMinute(st.requests.delete + st.requests.other, st.seconds), 1),
        `per minute of load (${round(st.seconds, 0)} s measured, ${round(r[side].rps, 0)} req/s)`,
      ]);
    }
    if (r.playback) {
      const p = r.playback;
      rows.push([
        `${r.name}: playing a ${round(p.recordingMinutes, 0)}-minute recording (packed)`,
        round(p.perRecordingMinute.put, 2),
        round(p.perRecordingMinute.get, 2),
        round((p.requests.delete + p.requests.other) / (p.recordingMinutes || 1), 2),
        `per minute of recording (${p.requests.get} GETs for ${p.sources} sources in ${p.objects} objects)`,
      ]);
    }
  }
  return rows.length ? table(['what', 'PUT/min', 'GET/min', 'other/min', 'over'], rows) : '';
}

/** The playback of a long recording from packed storage. */
export function formatPlaybackTable(results: readonly CaptureLoadResult[]): string {
  const rows = results
    .filter((r) => r.playback)
    .map((r) => {
      const p = r.playback as PlaybackResult;
      return [
        r.name,
        round(p.recordingMinutes, 1),
        p.sources,
        p.objects,
        `${round(p.firstFrameMs.p50, 1)} / ${round(p.firstFrameMs.max, 1)} (${p.firstFrameMs.runs} runs)`,
        round(p.wholeMs, 0),
        p.apiRequests,
        p.requests.get,
        p.verified ? 'yes' : 'NO',
      ];
    });
  return rows.length
    ? table(
        [
          'scenario',
          'recording minutes',
          'sources',
          'packed objects',
          'first frame ms p50 / max',
          'whole recording ms',
          'API requests',
          'store GETs',
          'verified',
        ],
        rows,
      )
    : '';
}

/** The capture load scenarios: one row per side, the events/s ratio on the service's row. */
export function formatCaptureLoadTable(results: readonly CaptureLoadResult[]): string {
  const row = (r: CaptureLoadResult, side: 'service' | 'baseline') => {
    const s = r[side];
    return [
      side === 'service' ? r.name : '',
      side,
      round(s.rps, 0),
      round(s.eventsPerSec, 0),
      round(s.mbPerSec, 2),
      round(s.p50, 1),
      round(s.p99, 1),
      s.errors,
      side === 'service' ? round(eventsRatio(r)) : '',
      r.statements ? round(side === 'service' ? r.statements.service : r.statements.baseline, 1) : '-',
      round(s.cpuMsPerRequest, 2),
      r.serialP50 ? round(r.serialP50[side], 1) : '-',
      round(s.rssMaxMb, 0),
    ];
  };
  return table(
    [
      'scenario',
      'side',
      'req/s',
      'events/s',
      'MB/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'events/s ratio',
      'SQL/req',
      'CPU ms/req',
      'serial p50 ms',
      'RSS max MB',
    ],
    results.flatMap((r) => [row(r, 'service'), row(r, 'baseline')]),
  );
}

export function rpsRatio(r: HttpScenarioResult): number {
  return r.baseline.rps > 0 ? r.service.rps / r.baseline.rps : 0;
}

export function p99Ratio(r: HttpScenarioResult): number {
  return r.baseline.p99 > 0 ? r.service.p99 / r.baseline.p99 : Infinity;
}

/** CPU time per request of the service ÷ the baseline's (user + system, each process alone). */
export function cpuRatio(r: HttpScenarioResult): number {
  return r.baseline.cpuMsPerRequest > 0 ? r.service.cpuMsPerRequest / r.baseline.cpuMsPerRequest : Infinity;
}

/** A ratio target met at `limit` or above, with the shortfall in points of ratio (and `reason`, when missed). */
function atLeast(
  name: string,
  value: number,
  limit: number,
  reason: string | null = MISS_REASONS.ratio,
): Target {
  const met = value >= limit;
  return {
    name,
    value: round(value),
    limit: `>= ${limit}`,
    met,
    note: met ? null : `${round((limit - value) * 100, 0)} points short`,
    ...(met || reason === null ? {} : { reason }),
  };
}

/** A ratio target met at `limit` or below, with the excess. */
function atMost(name: string, value: number, limit: number): Target {
  const met = value <= limit;
  return {
    name,
    value: round(value),
    limit: `<= ${limit}`,
    met,
    note: met ? null : `${round(value - limit)}× over`,
    ...(met ? {} : { reason: MISS_REASONS.ratio }),
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Every target the run can be judged on, met or not, with the shortfall spelled out. */
export function evaluateTargets(
  http: readonly HttpScenarioResult[],
  scheduler: SchedulerResult | null,
  memory: MemoryResult | null,
  capture: CaptureResult | null = null,
): Target[] {
  const targets: Target[] = [];
  for (const r of http) {
    targets.push(errorsTarget(r));
    if (!r.read) {
      targets.push(atLeast(`${r.name}: req/s ratio`, rpsRatio(r), MIN_WRITE_RPS_RATIO));
      continue;
    }
    targets.push(atLeast(`${r.name}: req/s ratio`, rpsRatio(r), MIN_READ_RPS_RATIO));
    targets.push(atMost(`${r.name}: p99 ratio`, p99Ratio(r), MAX_READ_P99_RATIO));
    targets.push(atMost(`${r.name}: CPU per request ratio`, cpuRatio(r), MAX_READ_CPU_RATIO));
    if (r.name === 'recordings-list') {
      targets.push({
        name: 'recordings-list: service p50 (ms)',
        value: r.service.p50,
        limit: `< ${RECORDINGS_LIST_P50_MS}`,
        met: r.service.p50 < RECORDINGS_LIST_P50_MS,
        note:
          r.service.p50 < RECORDINGS_LIST_P50_MS
            ? null
            : `${round(r.service.p50 - RECORDINGS_LIST_P50_MS)} ms over`,
        ...(r.service.p50 < RECORDINGS_LIST_P50_MS ? {} : { reason: MISS_REASONS.recordingsP50 }),
      });
    }
  }
  if (scheduler) {
    const tick = scheduler.tickMs.length ? median(scheduler.tickMs) : Infinity;
    targets.push({
      name: `scheduler: tick wall time at ${scheduler.exports} due exports (ms, median)`,
      value: round(tick, 0),
      limit: `< ${SCHEDULER_TICK_MS}`,
      met: tick < SCHEDULER_TICK_MS,
      note: tick < SCHEDULER_TICK_MS ? null : `${round(tick - SCHEDULER_TICK_MS, 0)} ms over`,
      ...(tick < SCHEDULER_TICK_MS ? {} : { reason: MISS_REASONS.scheduler }),
    });
    targets.push({
      name: `scheduler: duplicate runs after ${scheduler.concurrentTicks} concurrent ticks`,
      value: scheduler.duplicateRuns,
      limit: '= 0',
      met: scheduler.duplicateRuns === 0,
      note: scheduler.duplicateRuns ? 'the exactly-once guarantee failed' : null,
    });
    const unmatched = scheduler.runsWithoutJob + scheduler.runsWithoutLog;
    targets.push({
      name: 'scheduler: runs without exactly one job and one log line once dispatched',
      value: unmatched,
      limit: '= 0',
      met: unmatched === 0,
      note: unmatched ? 'the dispatch lost or repeated jobs or log lines' : null,
    });
  }
  if (capture) {
    const ms = capture.wallMs.length ? median(capture.wallMs) : Infinity;
    targets.push({
      name: `capture: ${capture.events} events of one session stored (ms, median)`,
      value: round(ms, 0),
      limit: `< ${CAPTURE_MS}`,
      met: ms < CAPTURE_MS,
      note: ms < CAPTURE_MS ? null : `${round(ms - CAPTURE_MS, 0)} ms over`,
    });
  }
  if (memory) targets.push(rssTarget('service RSS under load (MB, max)', memory.maxUnderLoadMb));
  return targets;
}

/** The service's resident set under a scenario's load stays below RSS_MB (the Deployment's memory budget). */
export function rssTarget(name: string, rssMaxMb: number): Target {
  const met = rssMaxMb < RSS_MB;
  return {
    name,
    value: round(rssMaxMb, 0),
    limit: `< ${RSS_MB}`,
    met,
    note: met ? null : `${round(rssMaxMb - RSS_MB, 0)} MB over`,
    ...(met ? {} : { reason: MISS_REASONS.rss }),
  };
}

/** The purge's targets: every expired row gone and nothing else, and recordings/s ≥ PURGE_RECORDINGS_PER_SEC. */
export function purgeTargets(p: RecordingsPurgeResult): Target[] {
  const rate = p.recordingsPerSec;
  const of = p.layout === 'packed' ? ' (packed)' : '';
  return [
    {
      name: `recordings-purge${of}: problems after the purge (rows left or lost, counter, other projects)`,
      value: p.problems.length,
      limit: '= 0',
      met: p.problems.length === 0,
      note: p.problems.length ? p.problems.join('; ') : null,
    },
    {
      name: `recordings-purge${of}: expired recordings deleted per second (${p.expired.recordings}, batches of ${p.batchSize})`,
      value: round(rate, 0),
      limit: `>= ${PURGE_RECORDINGS_PER_SEC}`,
      met: rate >= PURGE_RECORDINGS_PER_SEC,
      note: rate >= PURGE_RECORDINGS_PER_SEC ? null : `${round(PURGE_RECORDINGS_PER_SEC - rate, 0)}/s short`,
      ...(rate >= PURGE_RECORDINGS_PER_SEC ? {} : { reason: MISS_REASONS.purge }),
    },
  ];
}

/** A Markdown table with padded columns (as Prettier formats it, so the docs stay lint-clean). */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [header, ...rows].map((row) => row.map(String));
  const widths = header.map((_, i) => Math.max(3, ...cells.map((row) => row[i].length)));
  const line = (row: readonly string[]) => `| ${row.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [
    line(cells[0]),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

/** The HTTP scenarios: one row per side, and the service/baseline ratios on the service's row. */
export function formatHttpTable(results: readonly HttpScenarioResult[]): string {
  const rows = results.flatMap((r) => [
    [
      r.name,
      'service',
      round(r.service.rps, 0),
      round(r.service.p50, 1),
      round(r.service.p99, 1),
      r.service.errors,
      round(rpsRatio(r)),
      round(p99Ratio(r)),
      r.statements ? round(r.statements.service, 1) : '-',
      round(r.service.cpuMsPerRequest, 2),
      systemCell(r.service),
      r.serialP50 ? round(r.serialP50.service, 1) : '-',
      round(r.service.rssMaxMb, 0),
    ],
    [
      '',
      'baseline',
      round(r.baseline.rps, 0),
      round(r.baseline.p50, 1),
      round(r.baseline.p99, 1),
      r.baseline.errors,
      '',
      '',
      r.statements ? round(r.statements.baseline, 1) : '-',
      round(r.baseline.cpuMsPerRequest, 2),
      systemCell(r.baseline),
      r.serialP50 ? round(r.serialP50.baseline, 1) : '-',
      round(r.baseline.rssMaxMb, 0),
    ],
  ]);
  return table(
    [
      'scenario',
      'side',
      'req/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'req/s ratio',
      'p99 ratio',
      'SQL/req',
      'CPU ms/req',
      'of it system',
      'serial p50 ms',
      'RSS max MB',
    ],
    rows,
  );
}

/** The system part of a side's CPU per request, or '-' for results from before it was measured. */
function systemCell(s: LoadStats): string | number {
  return s.systemCpuMsPerRequest === undefined ? '-' : round(s.systemCpuMsPerRequest, 2);
}

export function formatSchedulerTable(s: SchedulerResult): string {
  return table(
    [
      'due exports',
      'tick ms (each)',
      'PostgreSQL CPU ms (each)',
      'runs/tick',
      'statements/tick',
      'concurrent ticks',
      'wall ms',
      'runs',
      'duplicates',
      'dispatch ms (each)',
      'dispatch CPU ms (each)',
      'runs without job / log',
    ],
    [
      [
        s.exports,
        s.tickMs.map((t) => round(t, 0)).join(', '),
        s.tickPostgresCpuMs ? s.tickPostgresCpuMs.map((t) => round(t, 0)).join(', ') : '-',
        s.runsPerTick,
        s.statementsPerTick,
        s.concurrentTicks,
        round(s.concurrentWallMs, 0),
        s.concurrentRunsCreated,
        s.duplicateRuns,
        s.dispatchMs.map((t) => round(t, 0)).join(', '),
        s.dispatchPostgresCpuMs ? s.dispatchPostgresCpuMs.map((t) => round(t, 0)).join(', ') : '-',
        `${s.runsWithoutJob} / ${s.runsWithoutLog}`,
      ],
    ],
  );
}

export function formatCaptureTable(c: CaptureResult): string {
  return table(
    ['$snapshot events per request', 'wall ms (each)', 'service CPU ms (each)'],
    [
      [
        c.events,
        c.wallMs.map((t) => round(t, 0)).join(', '),
        c.serviceCpuMs.map((t) => round(t, 0)).join(', '),
      ],
    ],
  );
}

export function formatPurgeTable(...results: RecordingsPurgeResult[]): string {
  const latency = (l: LatencySummary) =>
    `${round(l.p50, 1)} / ${round(l.p99, 1)} / ${round(l.max, 0)}${l.errors ? ` (${l.errors} errors)` : ''}`;
  return table(
    [
      'chunks',
      'expired recordings',
      'rows deleted',
      'batch size',
      'batches',
      'wall ms',
      'recordings/s',
      'rows/s',
      'statements/batch',
      'batch ms p50 / max',
      'PostgreSQL CPU ms',
      'capture ms p50 / p99 / max: idle',
      'during purge',
      'verified',
    ],
    results.map((p) => [
      p.layout === 'packed'
        ? `packed (${p.store?.objects ?? 0} objects, ${p.purged.objects} deleted)`
        : 'rows',
      p.expired.recordings,
      p.rowsDeleted,
      p.batchSize,
      p.batches,
      round(p.wallMs, 0),
      round(p.recordingsPerSec, 0),
      round(p.rowsPerSec, 0),
      round(p.statementsPerBatch, 1),
      `${round(p.batchMs.p50, 0)} / ${round(p.batchMs.max, 0)}`,
      p.postgresCpuMs === null ? '-' : round(p.postgresCpuMs, 0),
      p.capture ? latency(p.capture.idle) : '-',
      p.capture ? `${latency(p.capture.duringPurge)}, ${p.capture.duringPurge.requests} req` : '-',
      p.problems.length ? `NO (${p.problems.length} problems)` : 'yes',
    ]),
  );
}

/** Recordings purged per second from packed storage ÷ from rows, in the same run. */
export const MIN_PURGE_PACKED_RATIO = 0.9;

/** The purge of packed recordings (objects, keys) against the purge of chunks in rows, the same run's. */
export function purgeComparisonTarget(rows: RecordingsPurgeResult, packed: RecordingsPurgeResult): Target {
  const ratio = rows.recordingsPerSec > 0 ? packed.recordingsPerSec / rows.recordingsPerSec : 0;
  return {
    name: 'recordings-purge: recordings/s with packed objects and keys ÷ with chunks in rows',
    value: round(ratio),
    limit: `>= ${MIN_PURGE_PACKED_RATIO}`,
    met: ratio >= MIN_PURGE_PACKED_RATIO,
    note:
      ratio >= MIN_PURGE_PACKED_RATIO
        ? null
        : `${round((MIN_PURGE_PACKED_RATIO - ratio) * 100, 0)} points short`,
  };
}

export function formatTargetsTable(targets: readonly Target[]): string {
  return table(
    ['target', 'value', 'limit', 'met', 'note'],
    targets.map((t) => [t.name, t.value, t.limit, t.met ? 'yes' : 'NO', t.note ?? '']),
  );
}

export const RESULTS_START = '<!-- bench-results:start -->';
export const RESULTS_END = '<!-- bench-results:end -->';

/** `doc` with the text between the results markers replaced by `block`; throws when the markers are missing. */
export function replaceResultsBlock(doc: string, block: string): string {
  const start = doc.indexOf(RESULTS_START);
  const end = doc.indexOf(RESULTS_END);
  if (start < 0 || end < start)
    throw new Error(`the document has no ${RESULTS_START} … ${RESULTS_END} block`);
  return `${doc.slice(0, start + RESULTS_START.length)}\n\n${block.trim()}\n\n${doc.slice(end)}`;
}
