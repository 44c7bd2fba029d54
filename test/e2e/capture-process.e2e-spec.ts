import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { newSessionId, rr, type Rrweb, snapshotEvent } from '../support/recordings.js';
import {
  bootstrapKey,
  deploymentNodeOptions,
  rawRequest,
  type RawResponse,
  rssBytes,
  sampleRss,
  type ServiceProcess,
  sleep,
  startService,
  waitFor,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';
import { margin } from '../support/shared-machine.js';

/**
 * The public capture path of the built service (`node dist/main.js`) with the Deployment's heap
 * (`--max-old-space-size=256`): bounded work for hostile bodies, an event loop that keeps serving during large
 * legitimate ones, and the drain deadline.
 *
 * @serial: times the built service's answers and measures its memory (test/support/test-runner.js).
 */

/** The Deployment's heap: `--max-old-space-size=256` (and its young generation limit). */
const HEAP = { NODE_OPTIONS: deploymentNodeOptions() };
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const MB = 1024 * 1024;

const gzipCapture = (body: unknown) => gzipSync(typeof body === 'string' ? body : JSON.stringify(body));

function postCapture(service: ServiceProcess, body: Buffer): Promise<RawResponse> {
  return rawRequest(service.base, '/s/?compression=gzip-js', {
    method: 'POST',
    raw: body,
    headers: { 'Content-Type': 'text/plain' },
  });
}

/** A large legitimate request: `n` `$snapshot` events of one session, one mouse move each, as posthog-js sends. */
function manySnapshotEvents(token: string, sessionId: string, n: number): Buffer {
  return gzipCapture(
    Array.from({ length: n }, (_, i) =>
      snapshotEvent({
        token,
        sessionId,
        windowId: `${sessionId}-w`,
        distinctId: 'big',
        events: [rr.move(T0 + i)],
      }),
    ),
  );
}

/** One `$snapshot` event holding `n` rrweb events (scrolls: 8 JSON values each). */
function oneLargeSnapshot(token: string, sessionId: string, n: number): Buffer {
  const events: Rrweb[] = Array.from({ length: n }, (_, i) => rr.scroll(T0 + i));
  return gzipCapture([snapshotEvent({ token, sessionId, distinctId: 'big', events })]);
}

/** Polls /healthz one request after another while `work` runs; returns every latency in milliseconds. */
async function healthLatencies(service: ServiceProcess, work: Promise<unknown>): Promise<number[]> {
  let done = false;
  void work.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const started = performance.now();
    const res = await rawRequest(service.base, '/healthz');
    latencies.push(performance.now() - started);
    expect(res.status).toBe(200);
    await sleep(10);
  }
  return latencies;
}

describe('the built service under a 256 MB heap: public capture path', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let token: string;
  let projectId: number;
  let auth: Record<string, string>;

  beforeAll(async () => {
    database = await cloneTemplate('capture_process');
    // The process runs on the real clock: a retention long enough that the recordings of T0 are still kept.
    service = await startService({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      RECORDING_RETENTION_DAYS: '3650',
      ...HEAP,
    });
    auth = { Authorization: `Bearer ${await bootstrapKey(service)}` };
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: auth,
      body: { name: 'Heap' },
    });
    expect(org.status).toBe(201);
    const team = org.json<{ teams: { id: number; api_token: string }[] }>().teams[0];
    token = team.api_token;
    projectId = team.id;
    // Warm up the capture path (code loaded, pools open) before anything is measured.
    for (let i = 0; i < 5; i++) {
      const res = await postCapture(
        service,
        gzipCapture([snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] })]),
      );
      expect(res.status).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  const alive = async () => {
    expect(service.child.exitCode).toBeNull();
    expect((await rawRequest(service.base, '/healthz')).status).toBe(200);
  };

  /** Sends a bomb and measures it: status, body, milliseconds, RSS growth in bytes. */
  async function bomb(body: Buffer) {
    const before = rssBytes(service.child.pid!);
    const rss = sampleRss(service.child.pid!);
    const started = performance.now();
    const res = await postCapture(service, body);
    const ms = performance.now() - started;
    await sleep(50);
    const growth = rss.stop() - before;
    return { res, ms, growth };
  }

  it('answers the gzip bomb ([{},{},…], 8.4 million objects, no token) 4xx in under a second, RSS growth under 50 MB', async () => {
    const body = gzipCapture(`[${'{},'.repeat(8_400_000 - 1)}{}]`);
    expect(body.length).toBeLessThan(40 * 1024);
    const { res, ms, growth } = await bomb(body);
    process.stdout.write(
      `bomb without token: ${res.status} in ${ms.toFixed(0)} ms, RSS +${(growth / MB).toFixed(1)} MB\n`,
    );
    expect(res.status).toBe(401);
    expect(res.json()).toMatchObject({
      type: 'authentication_error',
      code: 'not_authenticated',
      attr: 'token',
    });
    expect(ms).toBeLessThan(margin(1000));
    expect(growth).toBeLessThan(50 * MB);
    await alive();
  });

  it('answers the same bomb behind a valid token 413, as bounded', async () => {
    const first = JSON.stringify({ event: '$pageview', properties: { token } });
    const { res, ms, growth } = await bomb(gzipCapture(`[${first}${',{}'.repeat(8_400_000)}]`));
    process.stdout.write(
      `bomb with token: ${res.status} in ${ms.toFixed(0)} ms, RSS +${(growth / MB).toFixed(1)} MB\n`,
    );
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({
      type: 'invalid_request',
      code: 'payload_too_large',
      detail: 'Too many events in one request: at most 50000.',
      attr: null,
    });
    expect(ms).toBeLessThan(margin(1000));
    expect(growth).toBeLessThan(50 * MB);
    await alive();
  });

  it('answers the bomb hidden inside one event (values, then depth) 4xx, as bounded', async () => {
    const wide = gzipCapture(`[{"properties":{"token":"${token}","x":[${'{},'.repeat(8_400_000)}{}]}}]`);
    const deep = gzipCapture(`[${'['.repeat(5_000_000)}${']'.repeat(5_000_000)}]`);
    // The wide one builds values up to PUBLIC_JSON_MAX_VALUES (a million empty objects, about 64 MB of heap,
    // more of RSS while the collector copies them) before it is refused: bounded by that limit, not by the body.
    for (const [name, body, status, maxMs, maxGrowth] of [
      ['wide', wide, 413, 5000, 160 * MB],
      ['deep', deep, 400, 1000, 50 * MB],
    ] as const) {
      const { res, ms, growth } = await bomb(body);
      process.stdout.write(
        `${name} bomb: ${res.status} in ${ms.toFixed(0)} ms, RSS +${(growth / MB).toFixed(1)} MB\n`,
      );
      expect(res.status).toBe(status);
      expect(ms).toBeLessThan(margin(maxMs));
      expect(growth).toBeLessThan(maxGrowth);
    }
    await alive();
  });

  it('drops values that cannot be stored with one log line, and stores the rest of the batch', async () => {
    const good = newSessionId();
    const bad = newSessionId();
    const res = await postCapture(
      service,
      gzipCapture([
        snapshotEvent({ token, sessionId: bad, distinctId: 'nul\u0000id', events: [rr.click(T0)] }),
        snapshotEvent({
          token,
          sessionId: good,
          distinctId: 'fine',
          events: [rr.click(T0)],
          properties: { $set: { ok: 1, broken: 'x\ud800' } },
        }),
      ]),
    );
    expect(res.status).toBe(200);
    const list = await rawRequest(service.base, `/api/projects/${projectId}/session_recordings/${good}`, {
      headers: auth,
    });
    expect(list.status).toBe(200);
    expect(list.json<{ person: { properties: unknown } }>().person.properties).toEqual({ ok: 1 });
    expect(
      (
        await rawRequest(service.base, `/api/projects/${projectId}/session_recordings/${bad}`, {
          headers: auth,
        })
      ).status,
    ).toBe(404);
    await waitFor('the log line', () => service.logs().some((l) => l.context === 'CaptureService'));
    const lines = service.logs().filter((l) => l.context === 'CaptureService');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'warn',
      teamId: projectId,
      droppedCount: 2,
      dropped: [
        { attr: '0__distinct_id', problem: 'NUL character' },
        { attr: '1__properties__$set__broken', problem: 'lone UTF-16 surrogate' },
      ],
    });
    expect(String(lines[0].msg)).toContain('stored the rest of the batch');
  });
});

describe('the built service under a 256 MB heap: the event loop during large capture requests', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let control: ServiceProcess;
  let token: string;

  // A service of its own (what the bombs above left on the heap is not measured here), and an idle twin on the
  // same database polled at the same moments: its latencies are what the machine itself adds (a shared machine
  // can stall any process for a while), not what the capture request does.
  beforeAll(async () => {
    database = await cloneTemplate('capture_loop');
    service = await startService({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', ...HEAP });
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${await bootstrapKey(service)}` },
      body: { name: 'Loop' },
    });
    token = org.json<{ teams: { api_token: string }[] }>().teams[0].api_token;
    control = await startService({ DATABASE_URL: database.url, LOG_LEVEL: 'warn', ...HEAP });
    const warm = await postCapture(
      service,
      gzipCapture([snapshotEvent({ token, sessionId: newSessionId(), events: [rr.click(T0)] })]),
    );
    expect(warm.status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    for (const s of [service, control]) if (s && s.child.exitCode === null) s.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  it('keeps /healthz answering within 200 ms while large capture requests are decoded and stored', async () => {
    // Each several times what posthog-js sends at once (it flushes about 1 MB); the 40,000-event request of
    // the benchmark is the drain test's below.
    const shapes = [
      ['10,000 $snapshot events', () => manySnapshotEvents(token, newSessionId(), 10_000)],
      ['one $snapshot of 100,000 rrweb events', () => oneLargeSnapshot(token, newSessionId(), 100_000)],
    ] as const;
    for (const [name, body] of shapes) {
      // A stall of the service's own fails every attempt; one the machine imposes on every process (the idle
      // twin stalls as long) does not count against it. At most three attempts.
      const attempts: string[] = [];
      let passed = false;
      for (let attempt = 1; attempt <= 3 && !passed; attempt++) {
        const capture = postCapture(service, body());
        const [busy, idle] = await Promise.all([
          healthLatencies(service, capture),
          healthLatencies(control, capture),
        ]);
        const res = await capture;
        expect(res.status).toBe(200);
        // The request took long enough for the polling to have covered it.
        expect(busy.length).toBeGreaterThan(3);
        const worst = Math.max(...busy);
        const idleWorst = Math.max(...idle);
        attempts.push(
          `worst ${worst.toFixed(0)} ms over ${busy.length} (idle twin: ${idleWorst.toFixed(0)} ms)`,
        );
        // The bounds are an idle machine's, stretched by the load per core when the machine is shared (a stall
        // of the service's own, seconds of a blocked loop, stays far past them).
        passed = worst < margin(200) || worst <= idleWorst + margin(50);
      }
      process.stdout.write(`${name}: /healthz ${attempts.join('; ')}\n`);
      expect({ name, passed, attempts }).toEqual({ name, passed: true, attempts });
    }
    expect(service.child.exitCode).toBeNull();
  }, 180_000);
});

describe('the built service: the drain deadline holds during a large capture request', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await cloneTemplate('capture_drain');
  });
  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    await dropDatabase(database.name);
  });

  it('answers the request 503 and exits 1 at SHUTDOWN_TIMEOUT_MS, not when the work ends', async () => {
    const first = await startService({ DATABASE_URL: database.url, LOG_LEVEL: 'info', ...HEAP });
    service = first;
    const auth = { Authorization: `Bearer ${await bootstrapKey(first)}` };
    const org = await rawRequest(first.base, '/api/organizations', {
      method: 'POST',
      headers: auth,
      body: { name: 'Drain' },
    });
    const token = org.json<{ teams: { api_token: string }[] }>().teams[0].api_token;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    service = await startService({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '300',
      ...HEAP,
    });
    const app = service;
    // Several large requests at once: seconds of work, far past the deadline.
    const bodies = [
      manySnapshotEvents(token, newSessionId(), 40_000),
      oneLargeSnapshot(token, newSessionId(), 100_000),
      manySnapshotEvents(token, newSessionId(), 40_000),
    ];
    const captures = bodies.map((body) => postCapture(app, body).catch((e: unknown) => e));
    // The bodies are small (gzip): once the server logs nothing yet and has them, the work is under way.
    await sleep(300);
    const signalled = Date.now();
    app.child.kill('SIGTERM');
    const code = await app.exited;
    const elapsed = Date.now() - signalled;
    const answers = await Promise.all(captures);
    process.stdout.write(`drain: exit ${code} after ${elapsed} ms\n`);
    expect(code).toBe(1);
    expect(app.stdout()).toContain('drain not finished after 300 ms');
    // The deadline plus the 503 answers and the pool's end, not the seconds the work would have taken.
    expect(elapsed).toBeLessThan(300 + margin(1200));
    // Every request is answered 503: the one still working when the deadline came with the drain's answer, the
    // others possibly earlier by the capture memory budget (three bodies this large do not fit in it at once).
    const details = answers.map((a) => {
      const res = a as RawResponse;
      expect(res.status).toBe(503);
      const body = res.json<{ type: string; code: string; detail: string; attr: null }>();
      expect(body).toMatchObject({ type: 'server_error', code: 'unavailable', attr: null });
      return body.detail;
    });
    const drained = 'The server is shutting down and could not finish this request. Try again.';
    const busy = 'The server is busy decoding other recordings. Retry after 1 second.';
    expect(details).toContain(drained);
    for (const detail of details) expect([drained, busy]).toContain(detail);
  }, 60_000);
});
