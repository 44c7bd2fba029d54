/**
 * The pure parts of the side-by-side bench (bench/ab.ts): its options, the order of the sides in each trial,
 * the per-trial checks, and the summary of the trials — medians per side, the ratio B/A of the medians, the
 * paired ratios B/A of each trial (min, median, max) and how many trials B was lower.
 */

import { parseLoadOption, positiveInt, splitFlag } from './options.js';

export type AbSide = 'a' | 'b';
export const AB_SCENARIOS = ['capture-events', 'capture-postgres', 'capture-s3'] as const;
export type AbScenario = (typeof AB_SCENARIOS)[number];

export interface AbOptions {
  /** Built checkouts: each started from `<dir>/dist/main.js`, migrated with `<dir>/dist/cli.js migrate`. */
  a: string;
  b: string;
  scenario: AbScenario;
  trials: number;
  durationSec: number;
  /** Unmeasured load once per side, after it starts. */
  warmupSec: number;
  connections: number;
  out: string | null;
  /** PostgreSQL server (its `postgres` database) on which `bench_ab_a` and `bench_ab_b` are created. */
  postgresUrl: string;
  /** Leave the two databases after the run (dropped by default). */
  keepDatabases: boolean;
  help: boolean;
}

export const AB_USAGE = `Usage: node dist-bench/ab.js --a=DIR --b=DIR [options]

  --a=DIR, --b=DIR      built checkouts (dist/ and node_modules/) to compare; the same DIR twice is an A/A run
  --scenario=NAME       ${AB_SCENARIOS.join(', ')} (default capture-events);
                        capture-s3 starts an S3-protocol server (s3rver), a bucket per side
  --trials=N            trials, each one measurement of A and one of B, alternating which goes first (default 6)
  --duration=SECONDS    measured load per side and trial (default 10)
  --warmup=SECONDS      load before the first trial, once per side (default 3)
  --connections=N       concurrent connections, the same for both sides (default 10)
  --out=FILE            results file (JSON)
  --postgres=URL        PostgreSQL server (default BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres);
                        the databases bench_ab_a and bench_ab_b are dropped and created there
  --keep-databases      do not drop them afterwards

BENCH_SERVICE_NODE_ARGS (space-separated) are Node's flags for both services, as for the bench.

Both sides run with this checkout's bench settings (bench/lib/service-env.ts, NODE_OPTIONS and the MALLOC_*
settings of its deploy/k8s/base/deployment.yaml) and the Node that runs this script.`;

export function parseAbOptions(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): AbOptions {
  const options: AbOptions = {
    a: '',
    b: '',
    scenario: 'capture-events',
    trials: 6,
    durationSec: 10,
    warmupSec: 3,
    connections: 10,
    out: null,
    postgresUrl: env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    keepDatabases: false,
    help: false,
  };
  for (const arg of argv) {
    const [flag, value] = splitFlag(arg);
    if (parseLoadOption(options, flag, value)) continue;
    switch (flag) {
      case '--help':
      case '-h':
        options.help = true;
        break;
      case '--a':
      case '--b':
      case '--out':
      case '--postgres':
        if (!value) throw new Error(`${flag} needs a value`);
        if (flag === '--a') options.a = value;
        else if (flag === '--b') options.b = value;
        else if (flag === '--out') options.out = value;
        else options.postgresUrl = value;
        break;
      case '--scenario':
        if (!(AB_SCENARIOS as readonly string[]).includes(value))
          throw new Error(`--scenario: unknown '${value}'; known: ${AB_SCENARIOS.join(', ')}`);
        options.scenario = value as AbScenario;
        break;
      case '--trials':
        options.trials = positiveInt('trials', value);
        break;
      case '--keep-databases':
        options.keepDatabases = true;
        break;
      default:
        throw new Error(`unknown option '${arg}'\n\n${AB_USAGE}`);
    }
  }
  if (!options.help && (!options.a || !options.b)) throw new Error(`--a and --b are required\n\n${AB_USAGE}`);
  return options;
}

/** Which side is measured first in trial `i` (from 0): A then B, then B then A, and so on. */
export function trialOrder(i: number): [AbSide, AbSide] {
  return i % 2 === 0 ? ['a', 'b'] : ['b', 'a'];
}

/** One side's figures in one trial. */
export interface AbFigures {
  requests: number;
  rps: number;
  /** Events of the answered (2xx) requests per second (rrweb events for capture-postgres and capture-s3). */
  eventsPerSec: number;
  /** CPU time of the service process (user + system) per answered event, ms. */
  cpuMsPerEvent: number;
  /** The part of it spent by V8's worker threads, ms. */
  v8CpuMsPerEvent: number;
  p50: number;
  p99: number;
  errors: number;
  rssMaxMb: number;
  eventsSent: number;
  eventsStored: number;
  /** Rows stored more than once (capture-events; 0 where not counted). */
  duplicates: number;
}

export interface AbTrial {
  trial: number;
  first: AbSide;
  a: AbFigures;
  b: AbFigures;
}

export const AB_METRICS = ['eventsPerSec', 'cpuMsPerEvent', 'v8CpuMsPerEvent', 'p50', 'p99'] as const;
export type AbMetric = (typeof AB_METRICS)[number];

/** What is wrong with one side's trial (errors, events not stored exactly once), or null. */
export function trialProblem(f: AbFigures): string | null {
  const problems: string[] = [];
  if (f.errors) problems.push(`${f.errors} errors`);
  if (f.eventsStored !== f.eventsSent) problems.push(`${f.eventsStored} of ${f.eventsSent} events stored`);
  if (f.duplicates) problems.push(`${f.duplicates} duplicated rows`);
  if (!f.eventsSent) problems.push('no event answered');
  return problems.length ? problems.join(', ') : null;
}

/** The median (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** b / a, or null when a is 0 (or either is not a number). */
export function ratio(a: number, b: number): number | null {
  return a === 0 || !Number.isFinite(a) || !Number.isFinite(b) ? null : b / a;
}

export interface MetricSummary {
  medianA: number;
  medianB: number;
  /** medianB / medianA. */
  ratio: number | null;
  /** b / a of each trial (the two measured next to each other). */
  paired: { min: number; median: number; max: number } | null;
  /** Trials in which B's value was below A's. */
  bLower: number;
  trials: number;
}

export function summarizeMetric(trials: readonly AbTrial[], metric: AbMetric): MetricSummary {
  const a = trials.map((t) => t.a[metric]);
  const b = trials.map((t) => t.b[metric]);
  const paired = trials.map((t) => ratio(t.a[metric], t.b[metric])).filter((r): r is number => r !== null);
  return {
    medianA: median(a),
    medianB: median(b),
    ratio: ratio(median(a), median(b)),
    paired: paired.length
      ? { min: Math.min(...paired), median: median(paired), max: Math.max(...paired) }
      : null,
    bLower: trials.filter((t) => t.b[metric] < t.a[metric]).length,
    trials: trials.length,
  };
}

export function summarizeTrials(trials: readonly AbTrial[]): Record<AbMetric, MetricSummary> {
  return Object.fromEntries(AB_METRICS.map((m) => [m, summarizeMetric(trials, m)])) as Record<
    AbMetric,
    MetricSummary
  >;
}

/** Whether a ratio lies within ±`band` of 1 (0.05: "within 5 %"). */
export function withinBand(r: number | null, band = 0.05): boolean {
  return r !== null && Math.abs(r - 1) <= band + 1e-12;
}

const LABELS: Record<AbMetric, string> = {
  eventsPerSec: 'events/s',
  cpuMsPerEvent: 'CPU ms/event',
  v8CpuMsPerEvent: 'V8 workers ms/event',
  p50: 'p50 ms',
  p99: 'p99 ms',
};

function fixed(v: number, digits: number): string {
  return Number.isFinite(v) ? v.toFixed(digits) : '–';
}

/** The summary as text lines: per metric the medians, B/A of the medians, the paired ratios and B's lower count. */
export function formatSummary(summary: Record<AbMetric, MetricSummary>): string[] {
  return AB_METRICS.map((m) => {
    const s = summary[m];
    const digits = m === 'eventsPerSec' ? 0 : m.startsWith('p') ? 1 : 4;
    const paired = s.paired
      ? `paired B/A min ${s.paired.min.toFixed(3)}, median ${s.paired.median.toFixed(3)}, max ${s.paired.max.toFixed(3)}`
      : 'no paired ratio';
    return (
      `${LABELS[m].padEnd(20)} A ${fixed(s.medianA, digits).padStart(9)}  B ${fixed(s.medianB, digits).padStart(9)}  ` +
      `B/A ${s.ratio === null ? '–' : s.ratio.toFixed(3)}  (${paired}; B lower in ${s.bLower} of ${s.trials})`
    );
  });
}
