/**
 * The service's settings in the bench (bench/run.ts, bench/ab.ts): production defaults, the V8 heap and malloc
 * arenas of the base Kubernetes Deployment, with the scheduler and rate limits off.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Retention of the bench's service and baseline (see benchServiceEnv). */
export const BENCH_RETENTION_DAYS = 3650;

/** A variable of a base Kubernetes Deployment's container (NODE_OPTIONS, MALLOC_ARENA_MAX) under `root`. */
export function deploymentEnvValue(root: string, file: string, name: string): string {
  const manifest = readFileSync(join(root, 'deploy', 'k8s', 'base', file), 'utf8');
  const match = new RegExp(`- name: ${name}\\s+value: (.+)`).exec(manifest);
  if (!match) throw new Error(`deploy/k8s/base/${file} sets no ${name} for the service`);
  return match[1].trim().replace(/^(['"])(.*)\1$/, '$2');
}

/** glibc's malloc settings a base Deployment's container sets (its arenas and its two thresholds). */
export const MALLOC_VARIABLES = [
  'MALLOC_ARENA_MAX',
  'MALLOC_MMAP_THRESHOLD_',
  'MALLOC_TRIM_THRESHOLD_',
] as const;

/** The malloc settings of a base Deployment's container (`file` under deploy/k8s/base of `root`), each required. */
export function deploymentMallocEnv(root: string, file: string): Record<string, string> {
  return Object.fromEntries(MALLOC_VARIABLES.map((name) => [name, deploymentEnvValue(root, file, name)]));
}

/** BENCH_SERVICE_ENV="NAME=value,NAME=value": settings of an experiment (recorded in the results file). */
export function experimentEnv(raw = process.env.BENCH_SERVICE_ENV ?? ''): Record<string, string> {
  return Object.fromEntries(
    raw
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()]),
  );
}

export function benchServiceEnv(options: {
  /** The checkout whose deploy/k8s/base/deployment.yaml gives NODE_OPTIONS and the malloc settings. */
  root: string;
  port: number;
  databaseUrl: string;
  poolSize: number;
}): Record<string, string> {
  return {
    // The Deployment's V8 heap limit, sized for the container's memory limit: the service runs here with the
    // heap it has when deployed, not one sized for this machine's memory.
    NODE_OPTIONS: deploymentEnvValue(options.root, 'deployment.yaml', 'NODE_OPTIONS'),
    // The Deployment's malloc arenas and thresholds: the resident set measured is the deployed one.
    ...deploymentMallocEnv(options.root, 'deployment.yaml'),
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(options.port),
    DATABASE_URL: options.databaseUrl,
    DATABASE_POOL_SIZE: String(options.poolSize),
    LOG_LEVEL: 'info',
    MIGRATIONS_RUN: 'false',
    SCHEDULER_ENABLED: 'false',
    RATE_LIMIT_ENABLED: 'false',
    BATCH_EXPORT_WORKERS: 'false',
    // The seeded recordings are dated before the seed's day and the seed is reused for weeks: a ten-year
    // retention keeps every one of them listed (the list still filters by the cutoff, as it always does), and
    // this process never purges them.
    RECORDING_RETENTION_DAYS: String(BENCH_RETENTION_DAYS),
    RECORDING_PURGE_INTERVAL_SECONDS: '0',
    // The same for the events of the recordings-filter scenario (dated with the recordings).
    EVENTS_RETENTION_DAYS: String(BENCH_RETENTION_DAYS),
    ...experimentEnv(),
  };
}
