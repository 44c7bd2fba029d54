/**
 * Runs the capture load scenarios, each with its own service and baseline processes: `capture-postgres`
 * (snapshot chunks as rows) and `capture-s3` (chunks as objects in an S3-protocol server, s3rver, started here;
 * both sides upload each chunk with PutObject before the row that points at it is written).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type pg from 'pg';
import S3rver from 's3rver';
import {
  benchCaptureLoad,
  CaptureScenarioSkipped,
  captureProject,
  emptyCaptureProject,
} from './capture-load.js';
import type { BenchOptions, ScenarioName } from './options.js';
import { type Server, startServer } from './processes.js';
import type { CaptureLoadResult } from './report.js';
import type { Side } from './scenarios.js';

const BUCKET = 'bench-recordings';
const S3_CREDENTIALS = {
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
      'POST /s/?compression=gzip-js — the same load with RECORDING_STORAGE=s3: each chunk a PutObject to an ' +
      'S3-protocol server (s3rver) before its row',
  },
];

async function startS3(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const directory = await mkdtemp(join(tmpdir(), 'bench-s3rver-'));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const { port } = (await server.run()) as unknown as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
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
    const storageEnv: Record<string, string> = s3
      ? {
          RECORDING_STORAGE: 's3',
          // The per-chunk layout, which the baseline implements too: the stored chunks are compared object by
          // object. The packed layout (the default) has no scenario here yet.
          RECORDING_S3_LAYOUT: 'per-chunk',
          RECORDING_S3_BUCKET: BUCKET,
          RECORDING_S3_ENDPOINT: s3.endpoint,
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
          env: { ...options.serviceEnv(), PUBLIC_MAX_CONCURRENT_PER_IP: '0', ...storageEnv },
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
          ...storageEnv,
        },
        logFile: join(start.logDir, `baseline-${scenario.name}.log`),
        readyPath: '/healthz',
        cwd: start.root,
        nodeArgs: start.baselineNodeArgs,
      });
      const readObject = async (key: string): Promise<Buffer> => {
        if (!s3Client) throw new Error(`chunk object ${key} without an object store`);
        const out = await s3Client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
        return Buffer.from(await out.Body!.transformToByteArray());
      };
      try {
        results.push(
          await benchCaptureLoad({
            name: scenario.name,
            description: scenario.description,
            storage: scenario.storage,
            bench,
            db,
            statStatements: options.statStatements,
            project,
            servers: servers as Record<Side, Server>,
            readObject,
            log,
          }),
        );
      } catch (error) {
        if (!(error instanceof CaptureScenarioSkipped)) throw error;
        log(`${scenario.name}: skipped — ${error.message}`);
        skipped.push({ name: scenario.name, reason: error.message });
      }
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.stop()));
      s3Client?.destroy();
      await s3?.close();
      await emptyCaptureProject(db, project.id);
    }
  }
  return { results, skipped };
}
