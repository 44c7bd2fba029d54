import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { QueryRunner } from 'typeorm';
import { BatchExportsScheduler } from '../../src/batch-exports/batch-exports.scheduler.js';
import { MetricsServer } from '../../src/metrics/metrics.server.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { onSomePort } from '../support/service-process.js';
import type { TestUser } from '../support/factories.js';

/**
 * The Prometheus endpoint on METRICS_PORT, scraped over real HTTP while the real app answers real requests:
 * values are compared before and after, so each assertion pins exactly what the requests added.
 */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

class Scrape {
  constructor(
    readonly text: string,
    readonly samples: Sample[],
  ) {}

  /** The value of the one sample with this name and exactly these labels; 0 when absent (a counter not yet seen). */
  value(name: string, labels: Record<string, string> = {}): number {
    const found = this.samples.filter(
      (s) =>
        s.name === name &&
        Object.keys(s.labels).length === Object.keys(labels).length &&
        Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    );
    if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} is ambiguous`);
    return found[0]?.value ?? 0;
  }

  has(name: string): boolean {
    return this.samples.some((s) => s.name === name);
  }

  /** Every value the label takes on samples of this metric. */
  labelValues(name: string, label: string): Set<string> {
    return new Set(this.samples.filter((s) => s.name === name).map((s) => s.labels[label]));
  }
}

describe('metrics (METRICS_PORT)', () => {
  let t: TestApp;
  let metricsPort: number;
  let owner: TestUser;
  let orgId: string;
  let exportId: string;

  const scrape = async (): Promise<Scrape> => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    return new Scrape(text, parseExposition(text));
  };
  const EXPORT_ROUTE = '/api/organizations/:organization_id/batch_exports/:id';
  const http = (route: string, status: number, method = 'GET') => ({ method, route, status: String(status) });

  beforeAll(async () => {
    t = await onSomePort((port) => {
      metricsPort = port;
      return createTestApp({ METRICS_PORT: String(port), HOST: '127.0.0.1', DATABASE_POOL_SIZE: '3' });
    });
    owner = await t.factories.user();
    orgId = (await t.factories.organization(owner)).id;
    t.clock.set(new Date('2026-11-01T00:30:00Z'));
    exportId = (
      (
        await t.http
          .post(`/api/organizations/${orgId}/batch_exports`)
          .set(owner.auth)
          .send({ name: 'hourly', destination: { type: 'NoOp', config: {} }, interval: 'hour' })
          .expect(201)
      ).body as { id: string }
    ).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves the Prometheus text format on its own port, and only /metrics', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: 'POST' })).status).toBe(404);
    // The API port does not expose them.
    await t.http.get('/metrics').expect(404);
  });

  it('counts requests by method, route template and status: exactly the requests made', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      await t.http.get(`/api/organizations/${orgId}/batch_exports/${exportId}`).set(owner.auth).expect(200);
    }
    // The trailing-slash form is the same route.
    await t.http.get(`/api/organizations/${orgId}/batch_exports/${exportId}/`).set(owner.auth).expect(200);
    await t.http
      .patch(`/api/organizations/${orgId}/batch_exports/${exportId}`)
      .set(owner.auth)
      .send({ name: 'renamed' })
      .expect(200);
    const after = await scrape();

    const ok = http(EXPORT_ROUTE, 200);
    expect(after.value('http_requests_total', ok) - before.value('http_requests_total', ok)).toBe(4);
    const patched = http(EXPORT_ROUTE, 200, 'PATCH');
    expect(after.value('http_requests_total', patched) - before.value('http_requests_total', patched)).toBe(
      1,
    );

    const count = (s: Scrape) => s.value('http_request_duration_seconds_count', ok);
    const sum = (s: Scrape) => s.value('http_request_duration_seconds_sum', ok);
    const inf = (s: Scrape) => s.value('http_request_duration_seconds_bucket', { ...ok, le: '+Inf' });
    expect(count(after) - count(before)).toBe(4);
    expect(inf(after) - inf(before)).toBe(4);
    expect(sum(after)).toBeGreaterThan(sum(before));
    expect(sum(after) - sum(before)).toBeLessThan(60);
    // No raw id leaks into a request label (only the lag gauge names exports, by design and capped).
    const requestLines = after.text.split('\n').filter((l) => l.startsWith('http_'));
    expect(requestLines.join('\n')).not.toContain(exportId);
  });

  it('counts requests refused by the guard or the service under their route template', async () => {
    const readOnly = await t.factories.keyFor(owner, 'organization:read');
    const stranger = await t.factories.user();
    const before = await scrape();
    await t.http.get(`/api/organizations/${orgId}/batch_exports/${exportId}`).expect(401);
    await t.http.get(`/api/organizations/${orgId}/batch_exports/${exportId}`).expect(401);
    await t.http.get(`/api/organizations/${orgId}/batch_exports/${exportId}`).set(readOnly).expect(403);
    await t.http.get(`/api/organizations/${orgId}/batch_exports/${exportId}`).set(stranger.auth).expect(404);
    await t.http.get(`/api/organizations/${orgId}/batch_exports/${randomUUID()}`).set(owner.auth).expect(404);
    const after = await scrape();
    const diff = (status: number) =>
      after.value('http_requests_total', http(EXPORT_ROUTE, status)) -
      before.value('http_requests_total', http(EXPORT_ROUTE, status));
    expect([diff(401), diff(403), diff(404)]).toEqual([2, 1, 2]);
  });

  it('counts capture, a direct route, under its route template too', async () => {
    const before = await scrape();
    const body = JSON.stringify([
      { event: '$snapshot', properties: { token: 'phc_unknown', $session_id: 's' } },
    ]);
    for (const path of ['/s/', '/s/?ver=1.2.3', '/s']) {
      await t.http.post(path).set('Content-Type', 'text/plain').send(body).expect(401);
    }
    const after = await scrape();
    const refused = http('/s', 401, 'POST');
    expect(after.value('http_requests_total', refused) - before.value('http_requests_total', refused)).toBe(
      3,
    );
  });

  it('puts unknown paths under one `unmatched` route: 100 random paths add no label value', async () => {
    const before = await scrape();
    const paths = Array.from({ length: 100 }, () => `/api/nothing-${randomBytes(6).toString('hex')}/x`);
    for (const p of paths) await t.http.get(p).set(owner.auth).expect(404);
    // A body refused before any route runs is counted too.
    await t.http
      .post(`/api/organizations/${orgId}/batch_exports`)
      .set(owner.auth)
      .set('Content-Type', 'text/plain')
      .send('x')
      .expect(415);
    const after = await scrape();

    const routes = after.labelValues('http_requests_total', 'route');
    const newRoutes = [...routes].filter((r) => !before.labelValues('http_requests_total', 'route').has(r));
    expect(newRoutes.filter((r) => r !== 'unmatched')).toEqual([]);
    expect(routes.size).toBeLessThan(20);
    const unmatched = http('unmatched', 404);
    expect(
      after.value('http_requests_total', unmatched) - before.value('http_requests_total', unmatched),
    ).toBe(100);
    // Refused by the JSON middleware before routing: no template is known yet.
    const refused = http('unmatched', 415, 'POST');
    expect(after.value('http_requests_total', refused) - before.value('http_requests_total', refused)).toBe(
      1,
    );
    for (const p of paths.slice(0, 5)) expect(after.text).not.toContain(p);
  });

  it('counts scheduler ticks by outcome, the runs they create and their duration', async () => {
    const scheduler = t.app.get(BatchExportsScheduler);
    const runs = async () =>
      Number(
        (
          (await t.dataSource.query(
            'SELECT count(*)::int AS n FROM batch_export_runs WHERE batch_export_id = $1',
            [exportId],
          )) as { n: number }[]
        )[0].n,
      );
    const before = await scrape();
    expect(await runs()).toBe(0);

    // Five hourly intervals have ended (01:00 … 05:00).
    t.clock.set(new Date('2026-11-01T05:10:00Z'));
    await scheduler.tick();
    expect(await runs()).toBe(5);
    // A tick that fails on the database (the runs table is missing) counts as a failure.
    await t.dataSource.query('ALTER TABLE batch_export_runs RENAME TO batch_export_runs_away');
    try {
      t.clock.set(new Date('2026-11-01T06:10:00Z'));
      await scheduler.tick();
    } finally {
      await t.dataSource.query('ALTER TABLE batch_export_runs_away RENAME TO batch_export_runs');
    }
    expect(await runs()).toBe(5);
    const after = await scrape();

    const d = (name: string, labels: Record<string, string> = {}) =>
      after.value(name, labels) - before.value(name, labels);
    expect(d('batch_export_scheduler_ticks_total', { outcome: 'success' })).toBe(1);
    expect(d('batch_export_scheduler_ticks_total', { outcome: 'failure' })).toBe(1);
    expect(d('batch_export_runs_created_total')).toBe(5);
    expect(d('batch_export_scheduler_tick_duration_seconds_count')).toBe(2);
    expect(d('batch_export_scheduler_tick_duration_seconds_sum')).toBeGreaterThan(0);
  });

  describe('database pool gauges, read at scrape time', () => {
    const gauges = (s: Scrape) => ({
      inUse: s.value('db_pool_connections_in_use'),
      idle: s.value('db_pool_connections_idle'),
      waiting: s.value('db_pool_requests_waiting'),
      max: s.value('db_pool_connections_max'),
    });

    it('at rest: nothing in use or waiting, the configured maximum', async () => {
      const g = gauges(await scrape());
      expect(g).toEqual({ inUse: 0, idle: g.idle, waiting: 0, max: 3 });
      expect(g.idle).toBeGreaterThanOrEqual(0);
      expect(g.idle).toBeLessThanOrEqual(3);
    });

    it('follow connections checked out and queries queued for a connection', async () => {
      const held: QueryRunner[] = [];
      try {
        for (let i = 0; i < 3; i++) {
          const runner = t.dataSource.createQueryRunner();
          await runner.connect();
          held.push(runner);
        }
        expect(gauges(await scrape())).toEqual({ inUse: 3, idle: 0, waiting: 0, max: 3 });

        // The pool is exhausted: this query waits for a connection.
        const queued = t.dataSource.query('SELECT 1');
        expect(gauges(await scrape())).toEqual({ inUse: 3, idle: 0, waiting: 1, max: 3 });
        await held.pop()!.release();
        await queued;
        const g = gauges(await scrape());
        expect({ inUse: g.inUse, waiting: g.waiting }).toEqual({ inUse: 2, waiting: 0 });
      } finally {
        for (const r of held) await r.release();
      }
      expect(gauges(await scrape()).inUse).toBe(0);
    });
  });

  it('includes the process metrics', async () => {
    const s = await scrape();
    expect(s.value('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(s.value('process_resident_memory_bytes')).toBeGreaterThan(1024 * 1024);
    expect(s.has('nodejs_eventloop_lag_seconds')).toBe(true);
    expect(s.has('nodejs_heap_size_used_bytes')).toBe(true);
  });

  it('is off with METRICS_PORT=0 (the default) and closes with the application', async () => {
    const other = await createTestApp({}, { databaseUrl: t.databaseUrl });
    try {
      expect(other.app.get(MetricsServer).port).toBeNull();
    } finally {
      await other.close();
    }
    expect(t.app.get(MetricsServer).port).toBe(metricsPort);
  });
});

describe('the metrics server on shutdown', () => {
  it('stops listening when the application closes', async () => {
    let port = 0;
    const t = await onSomePort((p) => {
      port = p;
      return createTestApp({ METRICS_PORT: String(p), HOST: '127.0.0.1' });
    });
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await t.close();
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
