/**
 * Playing a long recording from packed storage (part of `capture-s3`): one session of about 30 minutes is
 * captured into the running service (posthog-js batches, in time order) and packed as the packer would over
 * those minutes — a pass after each 10 s of recording, each into an object of its own — by a packer of the
 * service built from dist/ (the service's own packer runs too, one at a time under its lock). Then the recording
 * is loaded as the player loads it (web/lib/snapshot-loader.ts: the list of sources, the first alone, then ranges
 * of 2, 4, 8 and at most 16): the time to its first frame (the list and the first source, which holds the full
 * snapshot), the time to read it all, and the requests the service sent to the object store meanwhile, per minute
 * of recording. Every event must come back as captured, in order.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { postCapture, quantile } from './capture-runner.js';
import { pageDom, sessionBodies } from './recording-load.js';
import type { PlaybackResult } from './report.js';
import { countsBetween, type StoreCounts } from './store-proxy.js';

/** Minutes of recording to play. */
export const PLAYBACK_MINUTES = 30;
/** Recording seconds between two packer passes (RECORDING_PACK_MAX_AGE_SECONDS' default). */
const PACK_EVERY_MS = 10_000;
/** Cold loads of the first frame timed. */
const FIRST_FRAME_RUNS = 5;
const MAX_RANGE = 16;

/** The player's ranges: the first source alone, then 2, 4, 8 and at most 16 (web/lib/snapshot-loader.ts). */
export function playerRanges<T>(sources: readonly T[], maxRange = MAX_RANGE): T[][] {
  const ranges: T[][] = [];
  let size = 1;
  for (let i = 0; i < sources.length; i += ranges[ranges.length - 1].length) {
    ranges.push(sources.slice(i, i + size));
    size = Math.min(size * 2, maxRange);
  }
  return ranges;
}

function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout after 60 s')));
    req.on('error', reject);
    req.end();
  });
}

interface Packer {
  pack(): Promise<void>;
  close(): Promise<void>;
}

/** Passes of one `pack()` that may fail before it gives up. */
const PACK_ATTEMPTS = 3;

/** A packer of the service (dist/), on its own connection, configured as the service is. */
async function servicePacker(
  root: string,
  databaseUrl: string,
  env: Record<string, string>,
  onRetry: (error: unknown) => void,
): Promise<Packer> {
  const load = (path: string) => import(pathToFileURL(join(root, 'dist', path)).href);
  const [options, config, transactions, repository, objectStore, storage, keys, clock, packer] =
    await Promise.all([
      load('database/typeorm-options.js'),
      load('config/config.js'),
      load('database/transactions.js'),
      load('session-recordings/storage/snapshot-storage.repository.js'),
      load('session-recordings/storage/s3-snapshot-object-store.js'),
      load('session-recordings/storage/snapshot-storage.js'),
      load('session-recordings/storage/recording-keys.js'),
      load('common/time/clock.js'),
      load('session-recordings/storage/snapshot-packer.js'),
    ]);
  // The features register their settings when features.js is imported: before the environment is parsed.
  const features = await load('features.js');
  const appConfig = config.AppConfig.fromEnv({ ...env, DATABASE_URL: databaseUrl });
  // The object store's credentials come from the SDK's usual variables, as in the service.
  for (const [k, v] of Object.entries(env)) if (k.startsWith('AWS_') && !process.env[k]) process.env[k] = v;
  const dataSource: DataSource = await new DataSource(
    options.typeormOptions({
      url: databaseUrl,
      poolSize: 2,
      applicationName: 'bench-playback-packer',
      features: await features.loadServiceFeatures(),
    }),
  ).initialize();
  const repo = new repository.SnapshotStorageRepository(dataSource);
  const objects = new objectStore.S3SnapshotObjectStore(appConfig);
  const p = new packer.SnapshotPacker(
    repo,
    objects,
    new storage.SnapshotStorage(objects, appConfig),
    new keys.RecordingKeys(repo, appConfig),
    new transactions.TransactionHost(dataSource),
    new clock.Clock(),
    appConfig,
  );
  return {
    pack: async () => {
      // The service's packer may hold the lock (null): wait for it and pack what is left. A pass that fails is
      // run again, as the service's next tick runs it (its chunks still wait).
      let failures = 0;
      for (let i = 0; i < 100; i++) {
        try {
          if ((await p.packDue({ force: true })) !== null) return;
        } catch (error) {
          if (++failures >= PACK_ATTEMPTS) throw error;
          onRetry(error);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('the packer lock stayed taken for 10 s');
    },
    close: () => dataSource.destroy(),
  };
}

export async function benchPlayback(options: {
  root: string;
  serviceUrl: string;
  databaseUrl: string;
  /** The service's settings (its object store through the counting proxy, its key-encryption key). */
  serviceEnv: Record<string, string>;
  db: pg.Client;
  project: { id: number; token: string };
  apiKey: string;
  storeCounts: () => StoreCounts;
  log: (m: string) => void;
}): Promise<PlaybackResult> {
  const { db, project, log } = options;
  const sessionId = `bench-play-${Date.now().toString(36)}`;
  const t0 = Date.UTC(2026, 10, 21, 7);
  // posthog-js's cadence: a batch every few seconds; enough of them for PLAYBACK_MINUTES.
  const bodies = sessionBodies(
    {
      token: project.token,
      sessionId,
      windowId: `${sessionId}-window`,
      distinctId: `${sessionId}-visitor`,
      t0,
      seed: 4242,
    },
    pageDom(),
    { incrementalRequests: Math.ceil((PLAYBACK_MINUTES * 60) / 6.2), eventsPerRequest: 60 },
  );
  const lastOf = (json: unknown[]) => {
    const events = (json[json.length - 1] as { properties: { $snapshot_data: { timestamp: number }[] } })
      .properties.$snapshot_data;
    return events[events.length - 1].timestamp;
  };
  const expected: unknown[] = bodies.flatMap((b) =>
    b.json.flatMap((e) => (e as { properties: { $snapshot_data: unknown[] } }).properties.$snapshot_data),
  );
  const recordingMinutes = (lastOf(bodies[bodies.length - 1].json) - t0) / 60_000;

  let failedPasses = 0;
  const packer = await servicePacker(options.root, options.databaseUrl, options.serviceEnv, (error) => {
    failedPasses++;
    log(`playback: a packer pass failed and is run again: ${(error as Error).message}`);
  });
  let result: PlaybackResult;
  try {
    const captureStarted = performance.now();
    let packedUntil = t0 + PACK_EVERY_MS;
    for (const body of bodies) {
      const res = await postCapture(options.serviceUrl, gzipSync(JSON.stringify(body.json)));
      if (res.status !== 200) throw new Error(`playback capture: ${res.status} ${res.body.slice(0, 200)}`);
      if (lastOf(body.json) >= packedUntil) {
        await packer.pack();
        packedUntil = lastOf(body.json) + PACK_EVERY_MS;
      }
    }
    await packer.pack();
    const { rows: layout } = await db.query<{ sources: number; objects: number; waiting: number }>(
      `SELECT count(*)::int AS sources, count(DISTINCT object_key)::int AS objects,
              count(*) FILTER (WHERE object_offset IS NULL)::int AS waiting
         FROM session_recording_snapshots WHERE team_id = $1 AND session_id = $2`,
      [project.id, sessionId],
    );
    if (layout[0].waiting)
      throw new Error(`playback: ${layout[0].waiting} chunks of the recording are not packed`);
    log(
      `playback: a ${recordingMinutes.toFixed(1)}-minute recording captured (${bodies.length} requests, ` +
        `${expected.length} events) and packed into ${layout[0].objects} objects (${layout[0].sources} chunks) ` +
        `in ${Math.round(performance.now() - captureStarted)} ms` +
        (failedPasses ? ` (${failedPasses} failed passes run again)` : ''),
    );

    const headers = { authorization: `Bearer ${options.apiKey}`, host: 'api.bench.test' };
    const base = `${options.serviceUrl}/api/projects/${project.id}/session_recordings/${sessionId}/snapshots`;
    const list = async () => {
      const res = await get(base, headers);
      if (res.status !== 200)
        throw new Error(`playback: the sources list answered ${res.status}: ${res.body.slice(0, 200)}`);
      return (JSON.parse(res.body) as { sources: { blob_key: string }[] }).sources;
    };
    const read = async (range: { blob_key: string }[]) => {
      const q =
        range.length === 1
          ? `blob_key=${range[0].blob_key}`
          : `start_blob_key=${range[0].blob_key}&end_blob_key=${range[range.length - 1].blob_key}`;
      const res = await get(`${base}?source=blob_v2&${q}`, headers);
      if (res.status !== 200)
        throw new Error(`playback: a source range answered ${res.status}: ${res.body.slice(0, 200)}`);
      return res.body;
    };

    // Time to first frame: the list, then the first source (meta and full snapshot), answered.
    const firstFrame: number[] = [];
    for (let i = 0; i < FIRST_FRAME_RUNS; i++) {
      const started = performance.now();
      const sources = await list();
      const first = await read(sources.slice(0, 1));
      firstFrame.push(performance.now() - started);
      if (!first.includes('"type":2')) throw new Error('playback: the first source holds no full snapshot');
    }

    // One whole load as the player makes it, the store's requests counted.
    const before = options.storeCounts();
    const started = performance.now();
    const sources = await list();
    const ranges = playerRanges(sources);
    const lines: string[] = [];
    for (const range of ranges) lines.push(...(await read(range)).split('\n').filter(Boolean));
    const wholeMs = performance.now() - started;
    const requests = countsBetween(before, options.storeCounts());
    const events = lines.map((l) => (JSON.parse(l) as [string, unknown])[1]);
    const verified =
      events.length === expected.length &&
      events.every((e, i) => JSON.stringify(e) === JSON.stringify(expected[i]));
    firstFrame.sort((a, b) => a - b);
    result = {
      recordingMinutes,
      sources: sources.length,
      objects: layout[0].objects,
      apiRequests: 1 + ranges.length,
      firstFrameMs: {
        p50: quantile(firstFrame, 0.5),
        max: firstFrame[firstFrame.length - 1],
        runs: firstFrame.length,
      },
      wholeMs,
      requests,
      perRecordingMinute: {
        put: requests.put / recordingMinutes,
        get: requests.get / recordingMinutes,
      },
      verified,
      failedPasses,
    };
    log(
      `playback: first frame ${result.firstFrameMs.p50.toFixed(1)} ms (median of ${firstFrame.length}, max ` +
        `${result.firstFrameMs.max.toFixed(1)}), the whole recording in ${Math.round(wholeMs)} ms over ` +
        `${result.apiRequests} API requests; object store: ${requests.get} GET (${requests.rangedGet} ranged), ` +
        `${requests.put} PUT = ${result.perRecordingMinute.get.toFixed(2)} GET per minute of recording; ` +
        (verified ? 'every event back in order' : `EVENTS DIFFER (${events.length} of ${expected.length})`),
    );
  } finally {
    await packer.close();
  }
  return result;
}
