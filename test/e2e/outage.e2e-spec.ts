import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/database/embedded-postgres.js';
import {
  bootstrapKey,
  freePort,
  rawRequest,
  type ServiceProcess,
  startService,
  waitFor,
} from '../support/service-process.js';

/**
 * A database outage, for real: the test owns a PostgreSQL server, starts the built service against it, stops
 * the server, and starts it again on the same port and data directory, without touching the service.
 */
const CONNECT_TIMEOUT_MS = 1000;

describe('database outage and recovery', () => {
  let dataDir: string;
  let port: number;
  let postgres: EmbeddedDatabase | undefined;
  let service: ServiceProcess;
  let key: string;

  const startPostgres = async () =>
    (postgres = await startEmbeddedPostgres({ dataDir, port, database: 'app' }));

  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'outage-pg-')), 'data');
    port = await freePort();
    const db = await startPostgres();
    service = await startService({
      DATABASE_URL: db.url,
      MIGRATIONS_RUN: 'true',
      LOG_LEVEL: 'info',
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      SCHEDULER_ENABLED: 'true',
      SCHEDULER_TICK_SECONDS: '1',
    });
    key = bootstrapKey(service);
  }, 90000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    await postgres?.stop();
    if (dataDir) await rm(dirname(dataDir), { recursive: true, force: true });
  });

  const list = (requestId?: string) =>
    rawRequest(service.base, '/api/organizations', {
      headers: { Authorization: `Bearer ${key}`, ...(requestId ? { 'X-Request-Id': requestId } : {}) },
    });

  it('serves normally while the database is up', async () => {
    expect((await list()).status).toBe(200);
    expect((await rawRequest(service.base, '/readyz')).status).toBe(200);
  });

  it('answers 503 unavailable within the connect timeout while the database is down', async () => {
    const logsBefore = service.logs().length;
    await postgres!.stop();
    postgres = undefined;

    // Pooled connections the server closed must not take the process down.
    const started = Date.now();
    const res = await list('outage-probe-1');
    const elapsed = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({
      type: 'server_error',
      code: 'unavailable',
      detail: 'The service is temporarily unavailable. Try again shortly.',
      attr: null,
    });
    expect(res.headers['x-request-id']).toBe('outage-probe-1');
    expect(elapsed).toBeLessThan(CONNECT_TIMEOUT_MS + 1500);

    // A write fails the same way.
    const write = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: { name: 'During the outage' },
    });
    expect(write.status).toBe(503);
    expect(write.json<{ code: string }>().code).toBe('unavailable');

    const ready = await rawRequest(service.base, '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json()).toEqual({
      type: 'server_error',
      code: 'unavailable',
      detail: 'The database is unreachable.',
      attr: null,
    });
    const live = await rawRequest(service.base, '/healthz');
    expect(live.status).toBe(200);
    expect(live.json()).toEqual({ status: 'ok' });

    // The scheduler skips its ticks with one warning each, no error stack.
    await waitFor(
      'two skipped scheduler ticks',
      () =>
        service
          .logs()
          .slice(logsBefore)
          .filter((l) => l.msg === 'database unavailable: batch export scheduler tick skipped').length >= 2,
    );
    const recent = service.logs().slice(logsBefore);
    const skip = recent.find((l) => l.msg === 'database unavailable: batch export scheduler tick skipped')!;
    expect(skip.level).toBe(40);
    expect(skip.context).toBe('BatchExportsScheduler');
    expect(recent.filter((l) => String(l.msg).startsWith('batch export scheduler tick failed'))).toEqual([]);

    // The failed request is logged with its request id.
    const failure = recent.find((l) => l.msg === 'database unavailable' && l.reqId === 'outage-probe-1');
    expect(failure).toBeDefined();
    // The pooled connections the server closed were reported once each and dropped; the process lives on.
    expect(recent.some((l) => l.msg === 'idle database connection lost; it will be replaced')).toBe(true);
    expect(service.child.exitCode).toBeNull();
  });

  it('recovers by itself when the database is back, without a restart', async () => {
    await startPostgres();
    await waitFor('the API to answer again', async () => (await list()).status === 200, 15000);
    expect((await rawRequest(service.base, '/readyz')).json()).toEqual({ status: 'ok', database: 'up' });
    const created = await rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}` },
      body: { name: 'After the outage' },
    });
    expect(created.status).toBe(201);
    const names = (await list()).json<{ results: { name: string }[] }>().results.map((o) => o.name);
    expect(names).toEqual(['After the outage']);
    // The same process throughout: it was never restarted.
    expect(service.child.exitCode).toBeNull();
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
