import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import {
  bootstrapKey,
  deploymentNodeOptions,
  onSomePort,
  rawRequest,
  type RawResponse,
  type ServiceProcess,
  sleep,
  startService,
} from '../support/service-process.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

/**
 * Capture uploads held past REQUEST_TIMEOUT_MS against the built service (`node dist/main.js`) with the
 * Deployment's heap: the memory budget a held upload was charged is given back when its deadline fires (or its
 * connection closes), whatever its decoder was waiting for (the body, or the budget itself), so that
 * unauthenticated uploads held open and then closed cannot leave every capture of the replica answering 503
 * "busy decoding" for good. The budget in use is the `capture_memory_budget_in_use_bytes` gauge. The service
 * runs with a 16 MiB budget, so that a few charges left behind would fill it.
 *
 * @serial: holds uploads for seconds against a child process (test/support/test-runner.js).
 */

const MiB = 1024 * 1024;
const TIMEOUT_MS = 3000;
const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];

interface Held {
  req: ClientRequest;
  status: number | null;
  body: string;
}

/** A chunked upload to `path` that sends `bytes` and then holds the request open (no end). */
function holdOpen(base: string, path: string, bytes: Buffer): Held {
  const req = httpRequest(`${base}${path}`, {
    method: 'POST',
    agent: false,
    headers: { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' },
  });
  const held: Held = { req, status: null, body: '' };
  req.on('error', () => undefined);
  req.on('response', (res) => {
    held.status = res.statusCode ?? 0;
    res.setEncoding('utf8');
    res.on('data', (c: string) => (held.body += c));
    res.on('error', () => undefined);
  });
  for (let offset = 0; offset < bytes.length; offset += 64 * 1024) {
    req.write(bytes.subarray(offset, offset + 64 * 1024));
  }
  return held;
}

describe('the built service: a capture held past its deadline gives its memory budget back', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let metricsPort: number;
  let token: string;

  beforeAll(async () => {
    database = await cloneTemplate('capture_budget_release');
    service = await onSomePort((port) => {
      metricsPort = port;
      return startService({
        DATABASE_URL: database.url,
        LOG_LEVEL: 'error',
        REQUEST_TIMEOUT_MS: String(TIMEOUT_MS),
        // A small budget, so that a few leaked charges would fill it.
        CAPTURE_MEMORY_BUDGET: '16mb',
        METRICS_PORT: String(port),
        NODE_OPTIONS: deploymentNodeOptions(),
      });
    });
    const org = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${await bootstrapKey(service)}` },
      body: { name: 'Budget' },
    });
    expect(org.status).toBe(201);
    token = org.json<{ teams: { api_token: string }[] }>().teams[0].api_token;
  }, 60_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  const budgetInUse = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const match = /^capture_memory_budget_in_use_bytes (\S+)$/m.exec(text);
    if (!match) throw new Error('no capture_memory_budget_in_use_bytes gauge');
    return Number(match[1]);
  };

  /** The three capture routes, each with a small valid body: their statuses. */
  async function captures(): Promise<Record<string, RawResponse>> {
    const sessionId = newSessionId('budget');
    const snapshot = snapshotEvent({
      token,
      sessionId,
      distinctId: 'u1',
      events: [rr.meta(Date.now(), 'https://x.example/')],
    });
    const event = (i: number) => ({
      event: 'clicked',
      distinct_id: 'u1',
      properties: { token, n: i, label: 'x'.repeat(20) },
    });
    const batch = Buffer.from(
      JSON.stringify({ api_key: token, batch: Array.from({ length: 60 }, (_, i) => event(i)) }),
    );
    expect(batch.length).toBeGreaterThan(5000);
    const send = (path: string, raw: Buffer) =>
      rawRequest(service.base, path, { method: 'POST', raw, headers: { 'Content-Type': 'text/plain' } });
    return {
      s: await send('/s/', Buffer.from(JSON.stringify([snapshot]))),
      e: await send('/e/', Buffer.from(JSON.stringify(event(0)))),
      batch: await send('/batch/', batch),
    };
  }

  /**
   * A chunked upload of `[` and then spaces, a piece every 50 ms, from `localAddress`, until it is answered
   * (the deadline's 503 `timeout`); then it is held open for `holdMs` and closed. Resolves with its status.
   */
  async function slowUpload(localAddress: string, holdMs: number): Promise<number> {
    const req = httpRequest(`${service.base}/s/`, {
      method: 'POST',
      agent: false,
      localAddress,
      headers: { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' },
    });
    req.on('error', () => undefined);
    const answered = new Promise<number>((resolve) => {
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('close', () => resolve(0));
    });
    let status: number | null = null;
    req.write('[');
    const piece = Buffer.alloc(16 * 1024, ' ');
    const tick = () => {
      if (status !== null) return;
      req.write(piece, () => setTimeout(tick, 50));
    };
    tick();
    status = await answered;
    await sleep(holdMs);
    req.destroy();
    return status;
  }

  it('slow uploads held past their deadline and closed give their charge back: captures stay 200', async () => {
    const statuses: number[] = [];
    // Rounds of slow uploads, each held past its deadline and then closed; each would leave its charge behind.
    for (let round = 0; round < 4; round++) {
      statuses.push(...(await Promise.all(ADDRESSES.map((address) => slowUpload(address, 200)))));
      await sleep(200);
    }
    // Every upload was answered: 503 `timeout` at its deadline, or 503 `unavailable` when the budget was full.
    expect(statuses.filter((s) => s !== 503)).toEqual([]);
    const answers = await captures();
    expect(Object.fromEntries(Object.entries(answers).map(([k, r]) => [k, r.status]))).toEqual({
      s: 200,
      e: 200,
      batch: 200,
    });
    expect(await budgetInUse()).toBe(0);
    expect((await rawRequest(service.base, '/readyz')).status).toBe(200);
  }, 90_000);

  it('the oldest upload waiting for the budget at its deadline, then closed, leaves every capture route 200', async () => {
    // The oldest request: a complete level-0 gzip member of `[` and spaces, parsed as it streams.
    const oldest = holdOpen(
      service.base,
      '/s/',
      gzipSync(Buffer.concat([Buffer.from('['), Buffer.alloc(140 * 1024, ' ')]), { level: 0 }),
    );
    await sleep(300);
    // A younger one: 140 KB of a level-0 gzip member of spaces (past what is read whole), then a member of 12 MiB
    // of spaces: collected while no JSON starts (12 of the 16 MiB).
    const younger = holdOpen(
      service.base,
      '/s/',
      Buffer.concat([
        gzipSync(Buffer.alloc(140 * 1024, ' '), { level: 0 }),
        gzipSync(Buffer.alloc(12 * MiB, ' ')),
      ]),
    );
    // Once the younger holds its 12 MiB (its answer would come at its deadline), the oldest goes on.
    for (let i = 0; i < 40 && (await budgetInUse()) < 12 * MiB; i++) await sleep(50);
    expect(younger.status).toBeNull();
    // The oldest goes on with a member of 4 MiB of spaces (8 MiB estimated): it waits for the younger one.
    oldest.req.write(gzipSync(Buffer.alloc(4 * MiB, ' ')));
    await sleep(TIMEOUT_MS + 500);
    for (const held of [oldest, younger]) {
      expect(held.status).toBe(503);
      expect(held.body).toContain('"code":"timeout"');
    }
    // Once the deadlines have fired nothing is charged, though both connections are still open.
    expect(await budgetInUse()).toBe(0);
    oldest.req.destroy();
    younger.req.destroy();
    await sleep(300);
    const answers = await captures();
    expect(Object.fromEntries(Object.entries(answers).map(([k, r]) => [k, r.status]))).toEqual({
      s: 200,
      e: 200,
      batch: 200,
    });
    expect(await budgetInUse()).toBe(0);
  }, 60_000);
});
