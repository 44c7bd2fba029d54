/**
 * Runs the capture load scenarios, each with its own service and baseline processes: `capture-postgres`
 * (snapshot chunks as rows) and `capture-s3` (an S3-protocol server, s3rver, started here: the service in its
 * default packed layout — chunks committed to PostgreSQL, packed by its packer into shared objects, encrypted
 * with a key-encryption key of the run — and the baseline uploading each chunk with PutObject before the row
 * that points at it). Each side reaches the store through a counting proxy of its own, so the PUT and GET
 * requests per minute of load are reported; `capture-s3` then plays a 30-minute recording from packed storage
 * (bench/lib/playback.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type pg from 'pg';
import {
  benchCaptureLoad,
  CaptureScenarioSkipped,
  captureProject,
  emptyCaptureProject,
} from './capture-load.js';
import type { BenchOptions, ScenarioName } from './options.js';
import { benchPlayback } from './playback.js';
import { type Server, startServer } from './processes.js';
import type { CaptureLoadResult } from './report.js';
import type { Side } from './scenarios.js';
import { startS3rver } from './s3rver.js';
import { StoreProxy } from './store-proxy.js';

export const BUCKET = 'bench-recordings';
export const S3_CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
};

export const CAPTURE_LOAD_SCENARIOS: readonly {
  name: ScenarioName;
  storage: 'postgres' | 's3';
  description: string;
}[] = [
  {
    name: 'capture-postgres',
    storage: 'postgres',
    description:
      'POST /s/?compression=gzip-js — posthog-js batches of new sessions (full snapshot + meta, then incremental ' +
      'batches), snapshot chunks stored as gzip rows',
  },
  {
    name: 'capture-s3',
    storage: 's3',
    description:
      'POST /s/?compression=gzip-js — the same load with RECORDING_STORAGE=s3 (s3rver): the service packs ' +
      '(chunks committed to PostgreSQL, one encrypted packed object per packer pass), the baseline makes each ' +
      'chunk a PutObject before its row',
  },
];

/** An S3-protocol server (s3rver) on loopback with the named buckets, its files in a temporary directory. */
export function startS3(
  buckets: readonly string[] = [BUCKET],
): Promise<{ endpoint: string; close(): Promise<void> }> {
  return startS3rver(buckets, 'bench-s3rver-');
}

function lastLines(file: string, n = 5): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-n).join(' / ').slice(0, 600);
  } catch {
    return '';
  }
}

export async function runCaptureLoadScenarios(options: {
  bench: BenchOptions;
  db: pg.Client;
  postgresUrl: string;
  statStatements: boolean;
  organizationId: string;
  seededRecordingsProjectId: number | null;
  serviceEnv: () => Record<string, string>;
  /** A personal API key that reads the capture project's recordings (the playback). */
  apiKey: string;
  start: {
    root: string;
    logDir: string;
    servicePort: number;
    baselinePort: number;
    poolSize: number;
    serviceNodeArgs?: string[];
    baselineNodeArgs?: string[];
  };
  log: (m: string) => void;
}): Promise<{ results: CaptureLoadResult[]; skipped: { name: string; reason: string }[] }> {
  const { bench, db, log, start } = options;
  const results: CaptureLoadResult[] = [];
  const skipped: { name: string; reason: string }[] = [];
  const project = await captureProject(db, options.organizationId);
  // The project is emptied before and after: never the one holding the seeded recordings.
  if (project.id === options.seededRecordingsProjectId)
    throw new Error(`project ${project.id} holds the seeded recordings: the capture load needs another`);
  for (const scenario of CAPTURE_LOAD_SCENARIOS) {
    if (!bench.scenarios.includes(scenario.name)) continue;
    await emptyCaptureProject(db, project.id);
    const s3 = scenario.storage === 's3' ? await startS3() : null;
    const proxies: Record<Side, StoreProxy> | null = s3
      ? { service: new StoreProxy(s3.endpoint), baseline: new StoreProxy(s3.endpoint) }
      : null;
    if (proxies) await Promise.all([proxies.service.start(), proxies.baseline.start()]);
    const kek = s3 ? randomBytes(32).toString('base64') : null;
    const storageEnv = (side: Side): Record<string, string> =>
      s3 && proxies
        ? {
            RECORDING_STORAGE: 's3',
            // The service in its default layout (packed, encrypted); the baseline implements per-chunk objects
            // only: the check compares the lines each stored, chunk by chunk.
            RECORDING_S3_LAYOUT: side === 'service' ? 'packed' : 'per-chunk',
            ...(side === 'service' ? { RECORDING_KEY_ENCRYPTION_KEY: kek as string } : {}),
            RECORDING_S3_BUCKET: BUCKET,
            RECORDING_S3_ENDPOINT: proxies[side].endpoint,
            ...S3_CREDENTIALS,
          }
        : { RECORDING_STORAGE: 'postgres' };
    const s3Client = s3
      ? new S3Client({
          endpoint: s3.endpoint,
          forcePathStyle: true,
          region: 'us-east-1',
          credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
        })
      : null;
    const servers: Partial<Record<Side, Server>> = {};
    try {
      const serviceLog = join(start.logDir, `service-${scenario.name}.log`);
      try {
        servers.service = await startServer({
          name: 'service',
          script: join(start.root, 'dist', 'main.js'),
          port: start.servicePort,
          // Realistic capture comes from many browsers, each its own address: the per-address cap is off here.
          env: { ...options.serviceEnv(), PUBLIC_MAX_CONCURRENT_PER_IP: '0', ...storageEnv('service') },
          logFile: serviceLog,
          readyPath: '/readyz',
          cwd: start.root,
          nodeArgs: start.serviceNodeArgs,
        });
      } catch (error) {
        if (!s3) throw error;
        const reason = `the service did not start with RECORDING_STORAGE=s3 (${lastLines(serviceLog) || String(error)})`;
        log(`${scenario.name}: skipped — ${reason}`);
        skipped.push({ name: scenario.name, reason });
        continue;
      }
      servers.baseline = await startServer({
        name: 'baseline',
        script: join(start.root, 'dist-bench', 'baseline', 'server.js'),
        port: start.baselinePort,
        env: {
          DATABASE_URL: options.postgresUrl,
          PORT: String(start.baselinePort),
          DATABASE_POOL_SIZE: String(start.poolSize),
          ...storageEnv('baseline'),
        },
        logFile: join(start.logDir, `baseline-${scenario.name}.log`),
        readyPath: '/healthz',
        cwd: start.root,
        nodeArgs: start.baselineNodeArgs,
      });
      const readObject = async (key: string, range?: { offset: number; length: number }): Promise<Buffer> => {
        if (!s3Client) throw new Error(`chunk object ${key} without an object store`);
        const out = await s3Client.send(
          new GetObjectCommand({
            Bucket: BUCKET,
            Key: key,
            Range: range ? `bytes=${range.offset}-${range.offset + range.length - 1}` : undefined,
          }),
        );
        return Buffer.from(await out.Body!.transformToByteArray());
      };
      try {
        const result = await benchCaptureLoad({
          name: scenario.name,
          description: scenario.description,
          storage: scenario.storage,
          layout: s3 ? 'packed' : null,
          kek,
          storeCounts: proxies
            ? { service: () => proxies.service.counts, baseline: () => proxies.baseline.counts }
            : null,
          bench,
          db,
          statStatements: options.statStatements,
          project,
          servers: servers as Record<Side, Server>,
          readObject,
          log,
        });
        if (proxies) {
          result.playback = await benchPlayback({
            root: start.root,
            serviceUrl: servers.service!.url,
            databaseUrl: options.postgresUrl,
            serviceEnv: { ...options.serviceEnv(), ...storageEnv('service') },
            db,
            project,
            apiKey: options.apiKey,
            storeCounts: () => proxies.service.counts,
            log,
          });
        }
        results.push(result);
      } catch (error) {
        if (!(error instanceof CaptureScenarioSkipped)) throw error;
        log(`${scenario.name}: skipped — ${error.message}`);
        skipped.push({ name: scenario.name, reason: error.message });
      }
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
      s3Client?.destroy();
      if (proxies) await Promise.all([proxies.service.close(), proxies.baseline.close()]);
      await s3?.close();
      await emptyCaptureProject(db, project.id);
    }
  }
  return { results, skipped };
}
