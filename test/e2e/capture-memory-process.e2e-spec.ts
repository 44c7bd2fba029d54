import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import {
  bootstrapKey,
  deploymentNodeOptions,
  rawRequest,
  rssBytes,
  mainThreadSchedule,
  sampleRss,
  type ServiceProcess,
  sleep,
  startService,
} from '../support/service-process.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

/**
 * Held capture uploads against the built service (`node dist/main.js`) with the Deployment's heap: the bytes a
 * capture request receives and collects are charged to CAPTURE_MEMORY_BUDGET as they arrive, and one request
 * receives at most CAPTURE_MEMORY_BUDGET / PUBLIC_MAX_CONCURRENT_PER_IP bytes, so 40 uploads from 5 addresses
 * (the per-address cap, 8, each) cannot take the process past the Deployment's memory limit, and `/healthz` is
 * never held up by more than 100 ms of the process's own work meanwhile (what the machine adds, the time the
 * kernel keeps a ready thread waiting for a CPU, is told apart: docs/limits.md).
 *
 * @serial: measures the built service's memory and its answer times (test/support/test-runner.js).
 */

const HEAP = { NODE_OPTIONS: deploymentNodeOptions() };
const MiB = 1024 * 1024;
/** The Deployment's memory limit (deploy/k8s/base/deployment.yaml: 512Mi). */
const MEMORY_LIMIT = 512 * MiB;
/** CAPTURE_MEMORY_BUDGET / PUBLIC_MAX_CONCURRENT_PER_IP with the defaults: 96 MiB / 8. */
const RECEIVE_LIMIT = (96 * MiB) / 8;
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];

interface Upload {
  req: ClientRequest;
  /** The status of the answer, once there is one. */
  status: number | null;
  closed: boolean;
}

// The /healthz bound is measured on a shared 2-core machine: a poll over it is retried once (the first failure is
// logged), as on a slower machine one of 400 polls can meet a full collection of the held uploads' garbage.
jest.retryTimes(1, { logErrorsBeforeRetry: true });

describe('the built service: held capture uploads stay within the memory budget', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let control: ServiceProcess;
  let token: string;

  beforeAll(async () => {
    database = await cloneTemplate('capture_memory');
    service = await startService({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', ...HEAP });
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${await bootstrapKey(service)}` },
      body: { name: 'Memory' },
    });
    expect(org.status).toBe(201);
    token = org.json<{ teams: { api_token: string }[] }>().teams[0].api_token;
    // An idle twin on the same database, polled at the same moments: its latency is what the machine and this
    // test's own process (which sends the uploads) add, not what the uploads do to the service.
    control = await startService({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', ...HEAP });
  }, 60_000);

  afterAll(async () => {
    if (control && control.child.exitCode === null) control.child.kill('SIGKILL');
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  /**
   * A capture upload from `localAddress` declaring `size` bytes: it sends `prefix`, then filler in 64 KiB
   * pieces every 50 ms up to all but the last byte, and holds the request open there.
   */
  function upload(localAddress: string, size: number, prefix: string, contentType: string): Upload {
    const req = httpRequest(`${service.base}/s/`, {
      method: 'POST',
      agent: false,
      localAddress,
      headers: { 'Content-Type': contentType, 'Content-Length': String(size) },
    });
    const state: Upload = { req, status: null, closed: false };
    req.on('error', () => undefined);
    req.on('close', () => (state.closed = true));
    req.on('response', (res) => {
      state.status = res.statusCode ?? 0;
      res.resume();
    });
    const piece = Buffer.alloc(64 * 1024, 'A');
    let sent = 0;
    const next = () => {
      if (state.closed || state.status !== null) return;
      const left = size - 1 - sent;
      if (left <= 0) return;
      const chunk =
        sent === 0
          ? Buffer.concat([Buffer.from(prefix), piece]).subarray(0, Math.min(left, piece.length))
          : piece.subarray(0, Math.min(left, piece.length));
      sent += chunk.length;
      req.write(chunk, () => setTimeout(next, 50));
    };
    next();
    return state;
  }

  it('a request declaring more than its share of the budget is 413 at once', async () => {
    // Only the headers and a first piece are sent: the answer comes before the body (a client still writing the
    // rest could see its connection closed under it instead of the answer).
    const req = httpRequest(`${service.base}/s/`, {
      method: 'POST',
      agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(RECEIVE_LIMIT + 1) },
    });
    req.on('error', () => undefined);
    const answered = new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
        res.on('error', reject);
      });
    });
    req.write(Buffer.alloc(64 * 1024, ' '));
    const res = await answered;
    req.destroy();
    expect(res).toEqual({
      status: 413,
      body: {
        type: 'invalid_request',
        code: 'payload_too_large',
        detail: `Request body is too large: at most ${RECEIVE_LIMIT} bytes.`,
        attr: null,
      },
    });
  });

  it('40 held uploads from 5 addresses: RSS under 512 MiB, /healthz answering, the budget back after', async () => {
    const before = rssBytes(service.child.pid!);
    const rss = sampleRss(service.child.pid!);
    // Form bodies (collected whole before decoding) and JSON bodies (decoded as they arrive), half each.
    const uploads = ADDRESSES.flatMap((address) =>
      Array.from({ length: 8 }, (_, i) =>
        i % 2
          ? upload(address, RECEIVE_LIMIT, 'data=', 'application/x-www-form-urlencoded')
          : upload(address, RECEIVE_LIMIT, `[{"token":"${token}","pad":"`, 'application/json'),
      ),
    );
    const latencies: number[] = [];
    /** Per poll: the part of its latency that is the service's own (`timed`). */
    const owns: number[] = [];
    const slow: string[] = [];
    const deadline = Date.now() + 15_000;
    // A poll's latency, and the part of it that is the process's own: less the time its main thread, or this
    // test's, was ready to run but waited for a CPU (on a loaded machine that is most of a slow answer, and no
    // stall of the process), and never less than the time its main thread ran meanwhile.
    const timed = async (target: ServiceProcess) => {
      const pid = target.child.pid!;
      const [before, ownBefore] = [mainThreadSchedule(pid), mainThreadSchedule(process.pid)];
      const started = performance.now();
      const res = await rawRequest(target.base, '/healthz');
      const ms = performance.now() - started;
      const [after, ownAfter] = [mainThreadSchedule(pid), mainThreadSchedule(process.pid)];
      expect(res.status).toBe(200);
      if (!before || !after || !ownBefore || !ownAfter) return { ms, own: ms };
      const waited = after.waited - before.waited + (ownAfter.waited - ownBefore.waited);
      return { ms, own: Math.max(ms - waited, after.cpu - before.cpu) };
    };
    while (Date.now() < deadline) {
      const [loaded, idle] = await Promise.all([timed(service), timed(control)]);
      latencies.push(loaded.ms);
      owns.push(loaded.own);
      // Slow by the service's own doing: over 100 ms of its own, and over what the idle twin took of its own at
      // the same moment (what the machine and this test's process add to both).
      if (loaded.own >= 100 && loaded.own > idle.own + 50) {
        slow.push(
          `${loaded.own.toFixed(0)} ms of its own in ${loaded.ms.toFixed(0)} ms (idle twin ${idle.own.toFixed(0)} ms of ${idle.ms.toFixed(0)} ms)`,
        );
      }
      await sleep(20);
    }
    const held = uploads.filter((u) => u.status === null).length;
    const statuses = [...new Set(uploads.map((u) => u.status).filter((s) => s !== null))].sort();
    for (const u of uploads) u.req.destroy();
    const peak = rss.stop();
    await sleep(500);
    const after = rssBytes(service.child.pid!);
    // The budget comes back once the uploads are gone: a request needing about half of it is taken at once
    // (the held uploads' 12 MiB each would leave too little room for it if any of it were still held).
    const large = gzipSync(
      JSON.stringify([
        snapshotEvent({
          token,
          sessionId: newSessionId(),
          events: [rr.input(Date.UTC(2026, 10, 21), 'x'.repeat(20 * MiB))],
        }),
      ]),
    );
    const taken = await rawRequest(service.base, '/s/?compression=gzip-js', {
      method: 'POST',
      raw: large,
      headers: { 'Content-Type': 'text/plain' },
    });
    const worst = Math.max(...latencies);
    const median = [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length / 2)];
    const worstOwn = Math.max(...owns);
    process.stdout.write(
      `40 held uploads: RSS ${(before / MiB).toFixed(0)} → peak ${(peak / MiB).toFixed(0)} → ${(after / MiB).toFixed(0)} MiB; ` +
        `${held} still held after 15 s, others answered ${statuses.join(', ')}; /healthz over ${latencies.length} polls: ` +
        `median ${median.toFixed(0)} ms, worst ${worst.toFixed(0)} ms, worst of its own ${worstOwn.toFixed(0)} ms` +
        `${slow.length ? ` (slow: ${slow.join('; ')})` : ''}\n`,
    );
    expect(peak).toBeLessThan(MEMORY_LIMIT);
    // Requests past the budget are told to come back (503); the ones within it are still being received.
    expect(held).toBeGreaterThan(0);
    for (const status of statuses) expect([503]).toContain(status);
    expect(latencies.length).toBeGreaterThan(20);
    // Every poll within 100 ms of the service's own (docs/limits.md), and the median within 100 ms outright.
    expect(slow).toEqual([]);
    expect(median).toBeLessThan(100);
    expect(after).toBeLessThan(MEMORY_LIMIT);
    expect(taken.status).toBe(200);
    expect(service.child.exitCode).toBeNull();
    expect((await rawRequest(service.base, '/healthz')).status).toBe(200);
  }, 90_000);
});
