import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import pg from 'pg';
import {
  runsOf,
  seedSessions,
  startHttpReceiver,
  waitFor,
  waitForRunsToEnd,
} from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';

const H0 = new Date('2026-01-01T00:00:00.000Z');
const H1 = new Date('2026-01-01T01:00:00.000Z');

/**
 * A tarpit HTTP destination on loopback: it reads the request, answers 200 and then drips its body one byte
 * every `dripMs`, never ending. Counts the requests it holds now and the most it held at once.
 */
async function startTarpit(dripMs = 250): Promise<{
  url: string;
  requests: number;
  open: number;
  maxOpen: number;
  /** Wall-clock milliseconds each finished (cut off) request was held. */
  heldMs: number[];
  close(): Promise<void>;
}> {
  const state = { requests: 0, open: 0, maxOpen: 0, heldMs: [] as number[] };
  const responses = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const started = Date.now();
      state.requests++;
      state.open++;
      state.maxOpen = Math.max(state.maxOpen, state.open);
      responses.add(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), dripMs);
      res.on('close', () => {
        clearInterval(drip);
        responses.delete(res);
        state.open--;
        state.heldMs.push(Date.now() - started);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/batch/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of responses) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

async function setUp(env: Record<string, string>) {
  const t = await createTestApp({
    BATCH_EXPORT_WORKERS: 'true',
    BATCH_EXPORT_POLL_INTERVAL_MS: '100',
    BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
    BATCH_EXPORT_SUPERVISE_SECONDS: '1',
    BATCH_EXPORT_HEARTBEAT_SECONDS: '10',
    BATCH_EXPORT_HTTP_MAX_RETRIES: '0',
    ...env,
  });
  t.clock.set(new Date('2026-01-03T00:00:00.000Z'));
  return t;
}

/** An organization (owned by `owner`) with one recording in the first hour, and helpers for its exports. */
async function organizationWithData(t: TestApp, owner: TestUser, tag: string) {
  const org = await t.factories.organization(owner);
  await seedSessions(t.dataSource, org.teams[0].id, [
    {
      sessionId: `${tag}-s`,
      distinctId: `${tag}-d`,
      start: new Date(H0.getTime() + 60_000),
      end: new Date(H0.getTime() + 120_000),
      receivedAt: new Date(H0.getTime() + 180_000),
      clicks: 3,
    },
  ]);
  const path = (rest = '') => `/api/organizations/${org.id}/batch_exports${rest}`;
  return {
    id: org.id,
    create: async (name: string, destination: object) =>
      (
        await t.http
          .post(path())
          .set(owner.auth)
          .send({ name, interval: 'hour', model: 'sessions', destination })
          .expect(201)
      ).body as { id: string },
    backfill: (exportId: string) =>
      t.http
        .post(path(`/${exportId}/backfill`))
        .set(owner.auth)
        .send({ start_at: H0.toISOString(), end_at: H1.toISOString() })
        .expect(200),
    logs: async (exportId: string) =>
      (
        (
          await t.http
            .get(path(`/${exportId}/logs?limit=1000`))
            .set(owner.auth)
            .expect(200)
        ).body.results as { level: string; message: string }[]
      ).map((l) => `${l.level} ${l.message}`),
  };
}

describe('batch export deadlines: HTTP requests and destination statements', () => {
  let t: TestApp;
  let owner: TestUser;
  let org: Awaited<ReturnType<typeof organizationWithData>>;
  let dest: { name: string; url: string; user: string; password: string };

  beforeAll(async () => {
    t = await setUp({
      BATCH_EXPORT_MAX_ATTEMPTS: '3',
      BATCH_EXPORT_HTTP_TIMEOUT_MS: '2000',
      BATCH_EXPORT_STATEMENT_TIMEOUT_MS: '2000',
    });
    owner = await t.factories.user({ email: `deadline-owner-${process.pid}@example.com` });
    org = await organizationWithData(t, owner, 'a');
    dest = await createDestinationDatabase('deadlinedest', 'deadline-destination-password');
  });

  afterAll(async () => {
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('an HTTP destination that drips its answer is cut off at the total request deadline, and the run retried', async () => {
    const tarpit = await startTarpit(200);
    try {
      const { id } = await org.create('Drip', {
        type: 'HTTP',
        config: { url: tarpit.url, token: 'drip-token' },
      });
      const started = Date.now();
      await org.backfill(id);
      const [run] = await waitForRunsToEnd(t.http, owner.auth, org.id, id, 1, 40000);
      const elapsed = Date.now() - started;
      expect(run.status).toBe('FailedRetryable');
      expect(run.latest_error).toBe(
        'The HTTP destination did not answer in full within 2000 ms (BATCH_EXPORT_HTTP_TIMEOUT_MS) after 1 tries of a batch of 1 records.',
      );
      // Both attempts reached the tarpit and each was held about the deadline: not less (the drip kept
      // the connection busy, an idle timeout never fired), and not much more.
      expect(tarpit.requests).toBe(3);
      expect(tarpit.heldMs).toHaveLength(3);
      for (const held of tarpit.heldMs) {
        expect(held).toBeGreaterThanOrEqual(1800);
        expect(held).toBeLessThan(6000);
      }
      // Three 2 s attempts and their backoff: the whole run ended long before any idle timeout of a minute.
      expect(elapsed).toBeGreaterThanOrEqual(6000);
      expect(elapsed).toBeLessThan(30000);
      expect(await org.logs(id)).toContain(
        'WARNING Attempt 1 of 3 failed: The HTTP destination did not answer in full within 2000 ms (BATCH_EXPORT_HTTP_TIMEOUT_MS) after 1 tries of a batch of 1 records. It will be retried.',
      );
    } finally {
      await tarpit.close();
    }
  }, 60000);

  it('a statement blocked by a lock on a Postgres destination fails at the statement deadline; the run completes once the lock is gone', async () => {
    const holder = new pg.Client({ connectionString: dest.url });
    await holder.connect();
    try {
      const { id } = await org.create('Locked', {
        type: 'Postgres',
        config: {
          host: '127.0.0.1',
          port: Number(new URL(dest.url).port || 5432),
          database: dest.name,
          user: dest.user,
          password: dest.password,
          table_name: 'locked_sessions',
        },
      });
      // The first run creates the table (nothing holds it yet), then the test locks it.
      await org.backfill(id);
      const [first] = await waitForRunsToEnd(t.http, owner.auth, org.id, id, 1, 30000);
      expect(first.status).toBe('Completed');
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE locked_sessions IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      await org.backfill(id);
      // The attempt fails at the statement deadline, and the server no longer runs the statement.
      const failedAttempt = await waitFor(
        async () => (await org.logs(id)).find((l) => l.startsWith('WARNING Attempt 1 of 3 failed: merging')),
        20000,
        'the first attempt to fail',
      );
      const elapsed = Date.now() - started;
      expect(failedAttempt).toBe(
        'WARNING Attempt 1 of 3 failed: merging into the destination table: the statement did not end within 2000 ms ' +
          '(BATCH_EXPORT_STATEMENT_TIMEOUT_MS) — blocked by a lock or too slow; the attempt is retried. It will be retried.',
      );
      expect(elapsed).toBeGreaterThanOrEqual(1800);
      expect(elapsed).toBeLessThan(15000);
      await holder.query('COMMIT');
      const runs = await waitForRunsToEnd(t.http, owner.auth, org.id, id, 2, 30000);
      expect(runs.map((r) => r.status)).toEqual(['Completed', 'Completed']);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  }, 90000);
});

describe('batch export attempts have a deadline and organizations share the workers', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await setUp({
      BATCH_EXPORT_WORKER_CONCURRENCY: '3',
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: '2',
      // One owner has both organizations: the per-user cap is left out, so the organization's cap alone is measured
      // (test/e2e/batch-export-fairness.e2e-spec.ts has the user's).
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_USER: '0',
      BATCH_EXPORT_MAX_ATTEMPTS: '1',
      // Far longer than the attempt: only the attempt deadline stops the tarpit's requests.
      BATCH_EXPORT_HTTP_TIMEOUT_MS: '600000',
      BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: '8000',
    });
    owner = await t.factories.user({ email: `fair-owner-${process.pid}@example.com` });
  });

  afterAll(async () => {
    await t?.close();
  });

  it("a second organization's run completes while the first organization's tarpit exports hold their slots; those attempts end at the deadline", async () => {
    const tarpit = await startTarpit(250);
    const receiver = await startHttpReceiver();
    try {
      const stuck = await organizationWithData(t, owner, 'stuck');
      const other = await organizationWithData(t, owner, 'other');
      const stuckExports = [];
      for (const name of ['Tarpit 1', 'Tarpit 2', 'Tarpit 3']) {
        stuckExports.push(
          await stuck.create(name, { type: 'HTTP', config: { url: tarpit.url, token: 'tarpit' } }),
        );
      }
      const started = Date.now();
      for (const { id } of stuckExports) await stuck.backfill(id);
      // The first organization's runs take its cap of slots (2 of the 3)...
      await waitFor(async () => (tarpit.open === 2 ? true : undefined), 10000, 'two tarpit requests');
      const { id: otherId } = await other.create('Healthy', {
        type: 'HTTP',
        config: { url: receiver.url, token: 'healthy' },
      });
      await other.backfill(otherId);
      // ...and the other organization's run completes in the free slot while they are stuck.
      const [done] = await waitForRunsToEnd(t.http, owner.auth, other.id, otherId, 1, 20000);
      expect([done.status, done.records_completed]).toEqual(['Completed', 1]);
      expect(receiver.received).toHaveLength(1);
      const stuckStatuses = await Promise.all(
        stuckExports.map(async ({ id }) => (await runsOf(t.http, owner.auth, stuck.id, id))[0].status),
      );
      expect(stuckStatuses.sort()).toEqual(['Running', 'Running', 'Starting']);
      expect(tarpit.open).toBe(2);

      // Every stuck attempt ends at its deadline and frees its slot; the third run then gets one.
      const ended = await Promise.all(
        stuckExports.map(({ id }) => waitForRunsToEnd(t.http, owner.auth, stuck.id, id, 1, 60000)),
      );
      const elapsed = Date.now() - started;
      for (const [run] of ended) {
        expect(run.status).toBe('FailedRetryable');
        expect(run.latest_error).toBe(
          'The attempt did not end within 8000 ms (BATCH_EXPORT_ATTEMPT_TIMEOUT_MS): it was stopped and its worker freed.',
        );
      }
      expect(tarpit.requests).toBe(3);
      expect(tarpit.maxOpen).toBe(2);
      for (const held of tarpit.heldMs) {
        expect(held).toBeGreaterThanOrEqual(7000);
        expect(held).toBeLessThan(20000);
      }
      // Two rounds of 8 s attempts (2, then 1), not 24 hours.
      expect(elapsed).toBeGreaterThanOrEqual(16000);
      expect(elapsed).toBeLessThan(50000);
      const active = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'batch-export-runs' AND state = 'active'`,
      );
      expect(active[0].n).toBe(0);
    } finally {
      await tarpit.close();
      await receiver.close();
    }
  }, 90000);
});

describe('batch export egress by default (BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS unset)', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    // The test app allows private destinations for the other suites: this one restores the default.
    t = await setUp({ BATCH_EXPORT_MAX_ATTEMPTS: '1', BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'false' });
    owner = await t.factories.user({ email: `egress-owner-${process.pid}@example.com` });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('refuses loopback, also through the IPv6 forms that carry it, even outside production; nothing is sent', async () => {
    expect(t.config.get('NODE_ENV')).toBe('test');
    const receiver = await startHttpReceiver();
    try {
      const org = await organizationWithData(t, owner, 'egress');
      const port = new URL(receiver.url).port;
      const hosts = [
        '127.0.0.1',
        '[::ffff:127.0.0.1]',
        '[::127.0.0.1]',
        '[64:ff9b::7f00:1]',
        '[2002:7f00:1::1]',
      ];
      for (const host of hosts) {
        const { id } = await org.create(`To ${host}`, {
          type: 'HTTP',
          config: { url: `http://${host}:${port}/batch/`, token: 'egress' },
        });
        await org.backfill(id);
        const [run] = await waitForRunsToEnd(t.http, owner.auth, org.id, id, 1, 20000);
        // As the URL spells it (`::ffff:127.0.0.1` becomes `::ffff:7f00:1`).
        const address = new URL(`http://${host}/`).hostname.replace(/^\[|\]$/g, '');
        expect([run.status, run.latest_error]).toEqual([
          'Failed',
          `The destination host ${address} resolves to ${address}, a loopback, private, link-local or metadata ` +
            'address; batch exports are not delivered there (BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS).',
        ]);
      }
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 60000);
});
