import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { SnapshotSource } from '../support/recordings.js';
import {
  bootstrapKey,
  deploymentNodeOptions,
  rawRequest,
  rssBytes,
  sampleRss,
  type ServiceProcess,
  startService,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

/**
 * The planted recording of the hardening report: ten capture requests of 100,000 tiny rrweb events into one
 * session, then every snapshot source read through the project and the shared routes, by the built service
 * with the Deployment's heap (`--max-old-space-size=256`). Reads hold one stored chunk at a time: the resident
 * memory barely moves, and the process lives.
 *
 * @serial: measures the built service's memory (test/support/test-runner.js).
 */

const REQUESTS = 10;
const PER_REQUEST = 100_000;
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const MB = 1024 * 1024;

/** Streams a JSON lines response, checking each line and the time order; never holds the whole body. */
function readLines(
  base: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; contentType?: string; lines: number; first?: unknown; last?: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers, agent: false }, (res) => {
      let rest = '';
      let lines = 0;
      let first: unknown;
      let last: unknown;
      let previous = -Infinity;
      let ordered = true;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          const pair = JSON.parse(line) as [string, { timestamp: number }];
          if (pair[1].timestamp < previous) ordered = false;
          previous = pair[1].timestamp;
          first ??= pair;
          last = pair;
          lines++;
        }
      });
      res.on('end', () => {
        if (rest !== '') reject(new Error(`unterminated last line: ${rest.slice(0, 80)}`));
        else if (!ordered) reject(new Error('lines out of time order'));
        else
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            lines,
            first,
            last,
          });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a recording of 1,000,000 events read back under a 256 MB heap', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let auth: Record<string, string>;
  let projectId: number;
  let accessToken: string;
  const sessionId = `planted-${randomUUID()}`;
  const windowId = `${sessionId}-w`;

  beforeAll(async () => {
    database = await cloneTemplate('recording_reads');
    service = await startService({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      // The process runs on the real clock: a retention long enough that the recording of T0 is still kept.
      RECORDING_RETENTION_DAYS: '3650',
      NODE_OPTIONS: deploymentNodeOptions(),
    });
    auth = { Authorization: `Bearer ${await bootstrapKey(service)}` };
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: auth,
      body: { name: 'Planted' },
    });
    const team = org.json<{ teams: { id: number; api_token: string }[] }>().teams[0];
    projectId = team.id;
    for (let r = 0; r < REQUESTS; r++) {
      const events = Array.from({ length: PER_REQUEST }, (_, i) => ({
        type: 3,
        timestamp: T0 + r * PER_REQUEST + i,
        data: { source: 0 },
      }));
      const body = gzipSync(
        JSON.stringify([
          {
            event: '$snapshot',
            uuid: randomUUID(),
            distinct_id: 'planted',
            properties: {
              token: team.api_token,
              $session_id: sessionId,
              $window_id: windowId,
              $snapshot_data: events,
            },
          },
        ]),
      );
      const res = await rawRequest(service.base, '/s/?compression=gzip-js', {
        method: 'POST',
        raw: body,
        headers: { 'Content-Type': 'text/plain' },
      });
      expect({ request: r, status: res.status }).toEqual({ request: r, status: 200 });
    }
    await rawRequest(service.base, `/api/projects/${projectId}/session_recordings/${sessionId}/sharing`, {
      headers: auth,
    });
    const sharing = await rawRequest(
      service.base,
      `/api/projects/${projectId}/session_recordings/${sessionId}/sharing`,
      { method: 'PATCH', headers: auth, body: { enabled: true } },
    );
    accessToken = sharing.json<{ access_token: string }>().access_token;
  }, 900_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  it('stored every event, in bounded chunks', async () => {
    const res = await rawRequest(service.base, `/api/projects/${projectId}/session_recordings/${sessionId}`, {
      headers: auth,
    });
    expect(res.status).toBe(200);
    const recording = res.json<{ start_time: string; end_time: string }>();
    expect(Date.parse(recording.end_time) - Date.parse(recording.start_time)).toBe(
      REQUESTS * PER_REQUEST - 1,
    );
  });

  it.each([
    ['project', () => `/api/projects/${projectId}/session_recordings/${sessionId}/snapshots`, () => auth],
    ['shared', () => `/api/shared/${accessToken}/snapshots`, () => ({})],
  ])(
    'serves every source through the %s route with RSS growth bounded by a chunk',
    async (_route, pathOf, headersOf) => {
      const path = pathOf();
      const headers = headersOf();
      const pid = service.child.pid!;
      const before = rssBytes(pid);
      const rss = sampleRss(pid);
      const list = await rawRequest(service.base, path, { headers });
      expect(list.status).toBe(200);
      const { sources } = list.json<{ sources: SnapshotSource[] }>();
      // RECORDING_CHUNK_MAX_EVENTS (10,000) per chunk.
      expect(sources).toHaveLength((REQUESTS * PER_REQUEST) / 10_000);
      let total = 0;
      for (const source of sources) {
        const read = await readLines(
          service.base,
          `${path}?source=blob_v2&blob_key=${source.blob_key}`,
          headers,
        );
        expect(read.status).toBe(200);
        expect(read.contentType).toBe('application/jsonl');
        expect(read.lines).toBe(10_000);
        expect((read.first as [string, { timestamp: number }])[1].timestamp).toBe(
          Date.parse(source.start_timestamp),
        );
        total += read.lines;
      }
      expect(total).toBe(REQUESTS * PER_REQUEST);
      // The whole recording as one range: streamed chunk after chunk.
      const range = await readLines(
        service.base,
        `${path}?source=blob_v2&start_blob_key=${sources[0].blob_key}&end_blob_key=${sources[sources.length - 1].blob_key}`,
        headers,
      );
      expect(range.lines).toBe(REQUESTS * PER_REQUEST);
      expect(range.first).toEqual([windowId, { type: 3, timestamp: T0, data: { source: 0 } }]);
      expect(range.last).toEqual([
        windowId,
        { type: 3, timestamp: T0 + REQUESTS * PER_REQUEST - 1, data: { source: 0 } },
      ]);
      const growth = rss.stop() - before;
      process.stdout.write(
        `${_route} reads: RSS ${(before / MB).toFixed(0)} MB, +${(growth / MB).toFixed(1)} MB\n`,
      );
      expect(growth).toBeLessThan(40 * MB);
      expect(service.child.exitCode).toBeNull();
      expect((await rawRequest(service.base, '/healthz')).status).toBe(200);
    },
    600_000,
  );
});
