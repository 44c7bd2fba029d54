/**
 * The figures, targets and table of the `capture-events` scenario (posthog-js event batches to POST /e/ of the
 * service and of the baseline).
 */
import { round, rssTarget, table, type Target } from './report.js';
import { mean, meanIfEvery } from './stats.js';

/** The service's events/s must be at least this share of the baseline's (same run, same machine). */
export const MIN_EVENTS_RATIO = 0.8;

/** One side's figures under the event load. */
export interface EventsLoadStats {
  requests: number;
  rps: number;
  /** Events of the answered (2xx) requests per second. */
  eventsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of the server process per stored event (user + system), ms. */
  cpuMsPerEvent: number;
  /** The part of `cpuMsPerEvent` spent by V8's worker threads (garbage collection, compilation), ms. */
  v8CpuMsPerEvent?: number;
  rssMaxMb: number;
  /** Events in answered requests; rows of the load in `events` afterwards; rows whose uuid is there twice. */
  eventsSent: number;
  eventsStored: number;
  duplicates: number;
}

export interface EventsLoadResult {
  name: string;
  description: string;
  service: EventsLoadStats;
  baseline: EventsLoadStats;
  rounds: { first: 'service' | 'baseline'; service: EventsLoadStats; baseline: EventsLoadStats }[];
  /**
   * SQL statements per request on each side (pg_stat_statements), when available; whether both sent the same
   * statements as often, else (`note`) which differ.
   */
  statements: { service: number; baseline: number; sameStatements: boolean; note: string | null } | null;
  /** Median latency of requests sent one at a time (no queueing), ms. */
  serialP50: { service: number; baseline: number } | null;
  /** The check visitor's rows (and its persons) were the same on both sides. */
  sameStored: boolean;
}

/** The rounds of one side summed (counts) or averaged (rates, latencies), RSS at its largest. */
export function meanEvents(all: readonly EventsLoadStats[]): EventsLoadStats {
  const sum = (f: (s: EventsLoadStats) => number) => all.reduce((a, s) => a + f(s), 0);
  return {
    requests: sum((s) => s.requests),
    rps: mean(all.map((s) => s.rps)),
    eventsPerSec: mean(all.map((s) => s.eventsPerSec)),
    p50: mean(all.map((s) => s.p50)),
    p99: mean(all.map((s) => s.p99)),
    errors: sum((s) => s.errors),
    cpuMsPerEvent: mean(all.map((s) => s.cpuMsPerEvent)),
    ...meanIfEvery(all, 'v8CpuMsPerEvent'),
    rssMaxMb: Math.max(0, ...all.map((s) => s.rssMaxMb)),
    eventsSent: sum((s) => s.eventsSent),
    eventsStored: sum((s) => s.eventsStored),
    duplicates: sum((s) => s.duplicates),
  };
}

/** The service's events/s ÷ the baseline's. */
export function eventsLoadRatio(r: Pick<EventsLoadResult, 'service' | 'baseline'>): number {
  return r.baseline.eventsPerSec > 0 ? r.service.eventsPerSec / r.baseline.eventsPerSec : 0;
}

/** No errors, every answered event stored exactly once on both sides, events/s ≥ MIN_EVENTS_RATIO × baseline. */
export function eventsLoadTargets(r: EventsLoadResult): Target[] {
  const errors = r.service.errors + r.baseline.errors;
  const off = (['service', 'baseline'] as const).filter(
    (side) => r[side].eventsStored !== r[side].eventsSent || r[side].duplicates !== 0,
  );
  const ratio = eventsLoadRatio(r);
  return [
    {
      name: `${r.name}: errors`,
      value: errors,
      limit: '= 0',
      met: errors === 0,
      note: errors ? `${r.service.errors} on the service, ${r.baseline.errors} on the baseline` : null,
    },
    {
      name: `${r.name}: events stored ÷ answered (none lost, none twice)`,
      value: round(r.service.eventsSent ? r.service.eventsStored / r.service.eventsSent : 0, 3),
      limit: '= 1',
      met: off.length === 0,
      note: off.length
        ? off
            .map(
              (side) =>
                `${side}: ${r[side].eventsStored} of ${r[side].eventsSent}, ${r[side].duplicates} duplicated`,
            )
            .join('; ')
        : null,
    },
    {
      name: `${r.name}: events/s ratio`,
      value: round(ratio),
      limit: `>= ${MIN_EVENTS_RATIO}`,
      met: ratio >= MIN_EVENTS_RATIO,
      note: ratio >= MIN_EVENTS_RATIO ? null : `${round((MIN_EVENTS_RATIO - ratio) * 100, 0)} points short`,
    },
    rssTarget(`${r.name}: service RSS under load (MB, max)`, r.service.rssMaxMb),
  ];
}

export function formatEventsLoadTable(r: EventsLoadResult): string {
  const row = (side: 'service' | 'baseline') => {
    const s = r[side];
    return [
      side === 'service' ? r.name : '',
      side,
      round(s.rps, 0),
      round(s.eventsPerSec, 0),
      round(s.p50, 1),
      round(s.p99, 1),
      s.errors,
      side === 'service' ? round(eventsLoadRatio(r)) : '',
      r.statements ? round(r.statements[side], 1) : '-',
      r.serialP50 ? round(r.serialP50[side], 1) : '-',
      round(s.cpuMsPerEvent, 3),
      round(s.rssMaxMb, 0),
      `${s.eventsStored}/${s.eventsSent}`,
    ];
  };
  return table(
    [
      'scenario',
      'side',
      'req/s',
      'events/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'events/s ratio',
      'SQL/req',
      'serial p50 ms',
      'CPU ms/event',
      'RSS max MB',
      'stored/sent',
    ],
    [row('service'), row('baseline')],
  );
}
