import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import {
  bootstrapKey,
  deploymentNodeOptions,
  onSomePort,
  rawRequest,
  type RawResponse,
  type ServiceProcess,
  startService,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

/**
 * The longest the event loop of the built service (`node dist/main.js`, the Deployment's heap) is held by one
 * public request: the hostile bodies of the fuzz suites, the capture limits and the hardening reports, one at a
 * time. Measured by the service itself (`nodejs_eventloop_lag_max_seconds` on METRICS_PORT: the largest delay
 * of the event loop since the previous scrape).
 *
 * @serial: measures the built service's event loop stalls (test/support/test-runner.js).
 */

const HEAP = { NODE_OPTIONS: deploymentNodeOptions() };
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
/**
 * The stall no public request may cause on a loaded machine. Slices of work are a few milliseconds; what remains
 * is what V8 does at once (a collection of a heap full of parsed values, a 24 MB string made text): measured up
 * to about 0.65 s on a 2-core machine at load average 16, so a bound of 1 s, which the 13 s of a 900,000-key
 * object (before PUBLIC_JSON_MAX_KEYS) or any stall growing with the body would break.
 */
const MAX_STALL_MS = 1000;

describe('the built service: no public request stalls the event loop', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let metricsPort: number;
  let token: string;

  beforeAll(async () => {
    database = await cloneTemplate('public_stalls');
    service = await onSomePort((port) => {
      metricsPort = port;
      return startService({
        DATABASE_URL: database.url,
        LOG_LEVEL: 'warn',
        METRICS_PORT: String(port),
        ...HEAP,
      });
    });
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${await bootstrapKey(service)}` },
      body: { name: 'Stalls' },
    });
    expect(org.status).toBe(201);
    token = org.json<{ teams: { api_token: string }[] }>().teams[0].api_token;
  }, 60_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  /** The largest event loop delay since the previous call, in milliseconds, as the service measured it. */
  async function largestStall(): Promise<number> {
    const res = await rawRequest(`http://127.0.0.1:${metricsPort}`, '/metrics');
    const match = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(res.body);
    if (!match) throw new Error('no nodejs_eventloop_lag_max_seconds in /metrics');
    return Number(match[1]) * 1000;
  }

  const send = (path: string, raw: Buffer, headers: Record<string, string>) =>
    rawRequest(service.base, path, { method: 'POST', raw, headers });
  const json = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
  const form = (data: string) => Buffer.from(`data=${encodeURIComponent(data)}`);
  const b64 = (value: Buffer) => value.toString('base64');
  const event = (properties: Record<string, unknown> = {}, sessionId = newSessionId()) =>
    snapshotEvent({ token, sessionId, distinctId: 'stall', events: [rr.click(T0)], properties });
  /** `n` distinct keys: `{"k0":0,"k1":1,…}`. */
  const manyKeys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
  /** A batch whose first event sets `set` and whose second is malformed: decoded and validated, never stored. */
  const invalidAfterSet = (set: string) =>
    `[${JSON.stringify(event()).replace('"$lib":"web"', `"$lib":"web","$set":${set}`)},{"event":"$snapshot"}]`;

  const JSON_TYPE = { 'Content-Type': 'application/json' };
  const TEXT = { 'Content-Type': 'text/plain' };
  const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const MB = 1024 * 1024;

  /** What each input is, how it is sent, and the status it gets. */
  const inputs: [string, () => Promise<RawResponse>, number][] = [
    [
      '/flags: 1 MB of numbers',
      () => send('/flags/?v=2', json(`{"token":"${token}","x":[${'0,'.repeat(500_000)}0]}`), JSON_TYPE),
      200,
    ],
    [
      '/decide: form of base64, 1,000 levels deep',
      () => send('/decide/?v=3', form(b64(json(`${'['.repeat(1000)}${']'.repeat(1000)}`))), FORM),
      401,
    ],
    [
      '/flags: 10,000 levels deep',
      () => send('/flags/?v=2', json(`${'['.repeat(10_000)}${']'.repeat(10_000)}`), JSON_TYPE),
      400,
    ],
    [
      '/s/: a 12 MB string',
      // Not a $snapshot event: decoded, then ignored.
      () => send('/s/', json(`[{"token":"${token}","x":"${'a'.repeat(12 * MB - 100)}"}]`), JSON_TYPE),
      200,
    ],
    [
      '/s/: a 24 MB string inside gzip',
      () =>
        send(
          '/s/?compression=gzip-js',
          gzipSync(JSON.stringify([event({ $snapshot_data: [rr.input(T0, 'é'.repeat(12 * MB))] })])),
          TEXT,
        ),
      200,
    ],
    [
      '/s/: a 9 MB form of base64',
      () => send('/s/', form(b64(json([event({ pad: 'x'.repeat(6 * MB) })]))), FORM),
      200,
    ],
    [
      '/s/: 5,000,000 levels deep, gzip',
      () =>
        send('/s/?compression=gzip-js', gzipSync(`[${'['.repeat(5_000_000)}${']'.repeat(5_000_000)}]`), TEXT),
      400,
    ],
    [
      '/s/: 1,000,000 empty objects in one event, gzip',
      () =>
        send(
          '/s/?compression=gzip-js',
          gzipSync(`[{"properties":{"token":"${token}","x":[${'{},'.repeat(8_400_000)}{}]}}]`),
          TEXT,
        ),
      413,
    ],
    [
      '/s/: $set of 900,000 keys',
      // The parser stops building a `$set` past PERSON_SET_MAX_KEYS (it is dropped whole), so the request reads on
      // to the invalid event after it: 400.
      () => send('/s/?compression=gzip-js', gzipSync(invalidAfterSet(manyKeys(900_000))), TEXT),
      400,
    ],
    [
      '/s/: $set of 9,000 keys, decoded and validated',
      () => send('/s/?compression=gzip-js', gzipSync(invalidAfterSet(manyKeys(9_000))), TEXT),
      400,
    ],
    [
      '/s/: $set of 999 levels, decoded and validated',
      () =>
        send(
          '/s/?compression=gzip-js',
          gzipSync(invalidAfterSet(`${'{"a":'.repeat(995)}1${'}'.repeat(995)}`)),
          TEXT,
        ),
      400,
    ],
  ];

  it(`holds the event loop under ${MAX_STALL_MS} ms for every hostile input`, async () => {
    const measured: { name: string; status: number; stallMs: number }[] = [];
    for (const [name, request] of inputs) {
      // A stall the machine imposes (a shared, loaded machine) passes; one of the service's own repeats. At
      // most three attempts, the best counts.
      let best: { status: number; stallMs: number } | null = null;
      for (let attempt = 0; attempt < 3 && !(best && best.stallMs < MAX_STALL_MS); attempt++) {
        await largestStall();
        const res = await request();
        const stallMs = Math.round(await largestStall());
        if (!best || stallMs < best.stallMs) best = { status: res.status, stallMs };
      }
      measured.push({ name, ...best! });
    }
    process.stdout.write(
      `largest event loop stall per input:\n${measured.map((m) => `  ${m.name}: ${m.status}, ${m.stallMs} ms`).join('\n')}\n`,
    );
    expect(measured.map(({ name, status }) => ({ name, status }))).toEqual(
      inputs.map(([name, , status]) => ({ name, status })),
    );
    for (const m of measured)
      expect({ name: m.name, stalled: m.stallMs >= MAX_STALL_MS }).toEqual({ name: m.name, stalled: false });
    expect(service.child.exitCode).toBeNull();
  }, 300_000);
});
