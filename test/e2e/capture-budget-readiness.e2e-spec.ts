import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CaptureMemoryBudget } from '../../src/ingest/capture-memory-budget.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import { onSomePort } from '../support/service-process.js';

/**
 * The capture memory budget as operations see it: the `capture_memory_budget_*` gauges on METRICS_PORT, and
 * readiness, which fails while the budget has been exhausted (captures refused 503, no request ending) for
 * longer than twice REQUEST_TIMEOUT_MS, so a replica whose budget is stuck is taken out of service instead of
 * answering every capture 503 while /healthz and /readyz say it is fine. The real app, its real budget and
 * a real capture request; the service's clock is set by the test.
 */
describe('capture memory budget: gauges and readiness', () => {
  let t: TestApp;
  let metricsPort: number;
  let budget: CaptureMemoryBudget;
  let token: string;

  const gauge = async (name: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!match) throw new Error(`no ${name} gauge`);
    return Number(match[1]);
  };

  beforeAll(async () => {
    t = await onSomePort((port) => {
      metricsPort = port;
      return createTestApp({
        METRICS_PORT: String(port),
        HOST: '127.0.0.1',
        REQUEST_TIMEOUT_MS: '1000',
        CAPTURE_MEMORY_BUDGET: '1mb',
      });
    });
    budget = t.app.get(CaptureMemoryBudget);
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    token = org.teams[0].api_token;
  });

  afterAll(async () => {
    await t?.close();
  });

  const capture = () =>
    t.http
      .post('/s/')
      .set('Content-Type', 'application/json')
      .send(
        JSON.stringify([
          snapshotEvent({
            token,
            sessionId: newSessionId('ready'),
            distinctId: 'u1',
            events: [rr.meta(Date.now(), 'https://x.example/')],
          }),
        ]),
      );

  it('reports the budget, and fails readiness only once it has been exhausted past twice REQUEST_TIMEOUT_MS', async () => {
    expect(await gauge('capture_memory_budget_bytes')).toBe(1024 * 1024);
    expect(await gauge('capture_memory_budget_in_use_bytes')).toBe(0);
    expect((await capture()).status).toBe(200);
    expect(await gauge('capture_memory_budget_in_use_bytes')).toBe(0);

    // A request holding nearly all of the budget: the next capture is refused.
    const holder = budget.open();
    await holder.charge(1024 * 1024 - 100);
    expect(await gauge('capture_memory_budget_in_use_bytes')).toBe(1024 * 1024 - 100);
    const refused = await capture();
    expect([refused.status, refused.body.code, refused.headers['retry-after']]).toEqual([
      503,
      'unavailable',
      '1',
    ]);
    // Exhausted, but not for long: still ready.
    expect((await t.http.get('/readyz')).status).toBe(200);
    t.clock.advance(2000);
    expect((await t.http.get('/readyz')).status).toBe(200);
    expect(await gauge('capture_memory_budget_exhausted_seconds')).toBe(2);

    // Past twice REQUEST_TIMEOUT_MS with no request ending: the replica is taken out of service.
    t.clock.advance(1);
    const stuck = await t.http.get('/readyz');
    expect([stuck.status, stuck.body]).toEqual([
      503,
      {
        type: 'server_error',
        code: 'unavailable',
        detail: 'The capture memory budget has been exhausted for more than 2000 ms.',
        attr: null,
      },
    ]);
    expect((await t.http.get('/healthz')).status).toBe(200);

    // The request ends: memory moves again, and the replica is ready.
    holder.release();
    expect(await gauge('capture_memory_budget_exhausted_seconds')).toBe(0);
    expect((await t.http.get('/readyz')).status).toBe(200);
    expect((await capture()).status).toBe(200);
  });
});
