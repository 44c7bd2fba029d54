/**
 * Every scenario the bench knows, in the order it runs them. `scheduler`, `recordings-purge`, `capture` and
 * `export` are not load scenarios; `capture-postgres` and `capture-s3` drive POST /s/ with their own load generator,
 * `capture-events` POST /e/ with the same one. `citus` runs the events list and the event capture on one PostgreSQL
 * and on the Citus cluster at BENCH_CITUS_URL (skipped without it). `stack-floor` serves the baseline's handlers behind
 * node:http, Express, Nest on Express and Nest with the service's request log and headers in turn
 * (bench/lib/stack-floor.ts).
 */
export const SCENARIO_NAMES = [
  'organizations-list',
  'organization-retrieve',
  'recordings-list',
  'recording-retrieve',
  'batch-exports-list',
  'events-list',
  'invite-create',
  'organization-patch',
  'activity-log',
  'scim',
  'stack-floor',
  'scheduler',
  'recordings-purge',
  'recordings-filter',
  'export',
  'export-events',
  'capture-postgres',
  'capture-s3',
  'capture-events',
  'capture',
  'citus',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface BenchOptions {
  /** Seconds of measured load per side and round. */
  durationSec: number;
  /** Seconds of unmeasured load before each measured one. */
  warmupSec: number;
  /** Concurrent connections of the load generator (the same for both sides). */
  connections: number;
  /** A/B rounds per scenario: odd rounds start with the service, even ones with the baseline. */
  rounds: number;
  scenarios: readonly ScenarioName[];
  /** Drop and seed the bench database again even when its seed is current. */
  reseed: boolean;
  /** Where to write the results file (default: bench/results/<date>.json). */
  out: string | null;
  /**
   * Replace the results block of docs/performance.md with this run's tables: by default on a full run (every
   * scenario, not --quick); `--update-docs` / `--no-update-docs` decide otherwise.
   */
  updateDocs: boolean;
  quick: boolean;
  help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --quick               short run: 3 s of load after 1 s of warm-up, 1 round (also BENCH_QUICK=1)
  --duration=SECONDS    measured load per side and round (default 10)
  --warmup=SECONDS      warm-up before each measurement (default 3)
  --connections=N       concurrent connections, the same for both sides (default 10)
  --rounds=N            A/B rounds per scenario, alternating which side goes first (default 2; stack-floor
                        runs at least 3, its four fronts' order rotated each round)
  --scenario=a,b        only these scenarios: ${SCENARIO_NAMES.join(', ')};
                        stack-floor with HTTP scenarios named too measures only those, else all of them
  --reseed              seed the bench database again even when it is current
  --out=FILE            results file (default bench/results/<YYYY-MM-DD>.json; <YYYY-MM-DD>-partial.json
                        for --quick, a --scenario subset or a run with a failed stage, git-ignored); written
                        after each stage with "finished": false, so a run that stops early keeps what it
                        measured; a stage that fails is listed in "failed", the others still run (exit 1)
  --no-update-docs      leave docs/performance.md alone (a full run puts its tables there)
  --update-docs         put this run's tables in docs/performance.md also after a partial run (never after a run
                        with a failed stage; the page is written formatted by prettier)

Environment: BENCH_CITUS_URL (the coordinator of a Citus cluster, e.g. the URL \`npm run citus:up\` prints: the
\`citus\` scenario runs the events list and the event capture there beside a plain database on the same server;
without it that scenario is skipped with one line), BENCH_DATABASE_URL (a PostgreSQL server to use instead of the embedded one; the bench creates
and uses its own database "org_admin_bench" there), BENCH_PG_PORT (embedded server port, default 54398), BENCH_SERVICE_ENV ("NAME=value,…": settings the service runs with on top of the bench's), BENCH_SERVICE_NODE_ARGS (extra node flags
for the service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), BENCH_BASELINE_NODE_ARGS (the same for the
baseline of the capture load scenarios).`;

export function positiveInt(name: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new Error(`--${name} must be a positive integer, got '${raw}'`);
  return Number(raw);
}

/** `--flag=value` as `[flag, value]`; a flag without `=` has the value ''. */
export function splitFlag(arg: string): [string, string] {
  const at = arg.indexOf('=');
  return at < 0 ? [arg, ''] : [arg.slice(0, at), arg.slice(at + 1)];
}

/** The load options every bench shares (`--duration`, `--warmup`, `--connections`): true when `flag` is one. */
export function parseLoadOption(
  options: { durationSec: number; warmupSec: number; connections: number },
  flag: string,
  value: string,
): boolean {
  switch (flag) {
    case '--duration':
      options.durationSec = positiveInt('duration', value);
      break;
    case '--warmup':
      options.warmupSec = value === '0' ? 0 : positiveInt('warmup', value);
      break;
    case '--connections':
      options.connections = positiveInt('connections', value);
      break;
    default:
      return false;
  }
  return true;
}

/** Parses the command line (and the BENCH_QUICK knob); throws with a readable message on a bad option. */
export function parseOptions(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): BenchOptions {
  const quick = argv.includes('--quick') || env.BENCH_QUICK === '1';
  const options: BenchOptions = {
    durationSec: quick ? 3 : 10,
    warmupSec: quick ? 1 : 3,
    connections: 10,
    rounds: quick ? 1 : 2,
    scenarios: SCENARIO_NAMES,
    reseed: false,
    out: null,
    updateDocs: false,
    quick,
    help: false,
  };
  let updateDocs: boolean | null = null;
  for (const arg of argv) {
    const [flag, value] = splitFlag(arg);
    if (parseLoadOption(options, flag, value)) continue;
    switch (flag) {
      case '--quick':
        break;
      case '--help':
      case '-h':
        options.help = true;
        break;
      case '--reseed':
        options.reseed = true;
        break;
      case '--update-docs':
        updateDocs = true;
        break;
      case '--no-update-docs':
        updateDocs = false;
        break;
      case '--rounds':
        options.rounds = positiveInt('rounds', value);
        break;
      case '--out':
        if (!value) throw new Error('--out needs a file name');
        options.out = value;
        break;
      case '--scenario': {
        const names = value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const unknown = names.filter((n) => !(SCENARIO_NAMES as readonly string[]).includes(n));
        if (!names.length || unknown.length) {
          throw new Error(
            `--scenario: unknown '${unknown.join(',') || value}'; known: ${SCENARIO_NAMES.join(', ')}`,
          );
        }
        options.scenarios = SCENARIO_NAMES.filter((n) => names.includes(n));
        break;
      }
      default:
        throw new Error(`unknown option '${arg}'\n\n${USAGE}`);
    }
  }
  options.updateDocs = updateDocs ?? (!options.quick && options.scenarios.length === SCENARIO_NAMES.length);
  return options;
}
