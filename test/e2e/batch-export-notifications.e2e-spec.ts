/**
 * Told when a batch export breaks: the e-mails to the organization's admins and owners (a real SMTP server on
 * loopback; at most one failure e-mail a day per export, an auto-pause always told), the signed notification
 * webhook (a real HTTP receiver on loopback verifying the signature; retried through the job queue after a 500),
 * and the Prometheus series of runs by status and destination type, records and bytes, and lag.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { BatchExportWorker } from '../../src/batch-exports/runs/batch-export-worker.js';
import { MetricsService } from '../../src/metrics/metrics.service.js';
import { seedPersons, sleep, waitFor, waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

const H0 = new Date('2026-01-01T00:00:00.000Z');
const hours = (n: number) => new Date(H0.getTime() + n * 3600_000);
const SECRET = 'a-webhook-secret-of-32-characters';

interface Delivery {
  headers: IncomingHttpHeaders;
  raw: string;
  answered: number;
}

/** A webhook receiver: answers the statuses queued (then 200), keeps every request's raw body and headers. */
async function startReceiver(): Promise<{
  url: string;
  deliveries: Delivery[];
  answers: number[];
  close(): Promise<void>;
}> {
  const state = { deliveries: [] as Delivery[], answers: [] as number[] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answered = state.answers.shift() ?? 200;
      state.deliveries.push({ headers: req.headers, raw: Buffer.concat(chunks).toString('utf8'), answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/batch-exports`,
    ...state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a receiver does (docs/batch-exports.md): HMAC-SHA256 of `<timestamp>.<raw body>`, compared in constant time. */
function verified(secret: string, headers: IncomingHttpHeaders, raw: string): boolean {
  const timestamp = String(headers['x-batch-export-timestamp']);
  const expected = `v1=${createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')}`;
  const got = Buffer.from(String(headers['x-batch-export-signature']));
  return (
    got.length === expected.length &&
    timingSafeEqual(got, Buffer.from(expected)) &&
    Math.abs(Date.now() / 1000 - Number(timestamp)) < 300
  );
}

const SNOWFLAKE = {
  type: 'Snowflake',
  config: {
    account: 'a',
    user: 'u',
    password: 'p',
    database: 'd',
    warehouse: 'w',
    schema: 's',
    table_name: 't',
  },
};

describe('batch export notifications', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let orgId: string;
  let teamId: number;
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const backfill = (id: string, start: Date, end: Date) =>
    t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({ start_at: start.toISOString(), end_at: end.toISOString() })
      .expect(200);
  const mailsAbout = (name: string) => smtp.messages.filter((m) => m.subject.endsWith(`: ${name}`));

  beforeAll(async () => {
    smtp = await startSmtpServer();
    receiver = await startReceiver();
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
      BATCH_EXPORT_SUPERVISE_SECONDS: '1',
      BATCH_EXPORT_WEBHOOK_MAX_ATTEMPTS: '3',
      BATCH_EXPORT_WEBHOOK_RETRY_DELAY_SECONDS: '1',
      BATCH_EXPORT_LAG_METRIC_EXPORTS: '2',
      SMTP_URL: smtp.url,
    });
    t.clock.set(new Date('2026-01-03T00:00:00.000Z'));
    owner = await t.factories.user({ email: `notify-owner-${process.pid}@example.com` });
    admin = await t.factories.user({ email: `notify-admin-${process.pid}@example.com` });
    member = await t.factories.user({ email: `notify-member-${process.pid}@example.com` });
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    await seedPersons(
      t.dataSource,
      teamId,
      [0, 1, 2].map((i) => ({
        distinctIds: [`p-${i}`],
        properties: { i },
        updatedAt: new Date(H0.getTime() + 600_000),
      })),
    );
  });

  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    await receiver?.close();
  });

  it('refuses a webhook URL without its secret, a short secret and a bad URL; never returns the secret', async () => {
    const base = {
      name: 'Hooked',
      model: 'persons',
      interval: 'hour',
      destination: { type: 'NoOp', config: {} },
    };
    const refused = async (body: Record<string, unknown>, attr: string) => {
      const res = await t.http
        .post(path())
        .set(owner.auth)
        .send({ ...base, ...body })
        .expect(400);
      expect(res.body.attr).toBe(attr);
      return res.body.detail as string;
    };
    expect(await refused({ notification_webhook_url: receiver.url }, 'notification_webhook_secret')).toBe(
      'A new notification_webhook_url needs its notification_webhook_secret in the same request.',
    );
    await refused(
      { notification_webhook_url: receiver.url, notification_webhook_secret: 'short' },
      'notification_webhook_secret',
    );
    await refused(
      { notification_webhook_url: 'ftp://example.com/x', notification_webhook_secret: SECRET },
      'notification_webhook_url',
    );
    await refused({ notification_webhook_secret: SECRET }, 'notification_webhook_secret');

    const created = await t.http
      .post(path())
      .set(owner.auth)
      .send({ ...base, notification_webhook_url: receiver.url, notification_webhook_secret: SECRET })
      .expect(201);
    expect(created.body.notification_webhook_url).toBe(receiver.url);
    expect(JSON.stringify(created.body)).not.toContain(SECRET);
    const [stored] = await t.dataSource.query(
      'SELECT notification_webhook_secret AS secret FROM batch_exports WHERE id = $1',
      [created.body.id],
    );
    expect(stored.secret).toBe(SECRET);
    // Another URL needs its secret again; null removes the webhook and its secret.
    await t.http
      .patch(path(`/${created.body.id}`))
      .set(owner.auth)
      .send({ notification_webhook_url: 'https://hooks.example.com/other' })
      .expect(400);
    const removed = await t.http
      .patch(path(`/${created.body.id}`))
      .set(owner.auth)
      .send({ notification_webhook_url: null })
      .expect(200);
    expect(removed.body.notification_webhook_url).toBeNull();
    const [after] = await t.dataSource.query(
      'SELECT notification_webhook_secret AS secret FROM batch_exports WHERE id = $1',
      [created.body.id],
    );
    expect(after.secret).toBeNull();
    await t.http
      .delete(path(`/${created.body.id}`))
      .set(owner.auth)
      .expect(204);
  });

  it('a failed run e-mails the admins and owners once a day, and posts a signed webhook retried after a 500', async () => {
    const { body } = await t.http
      .post(path())
      .set(owner.auth)
      .send({
        name: 'Failing once a day',
        model: 'persons',
        interval: 'hour',
        destination: SNOWFLAKE,
        notification_webhook_url: receiver.url,
        notification_webhook_secret: SECRET,
      })
      .expect(201);
    const id = body.id as string;
    receiver.answers.push(500);
    await backfill(id, hours(0), hours(1));
    const [run] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
    expect(run.status).toBe('Failed');

    // The e-mail: to the owner and the admin, not the plain member.
    const mails = await waitFor(async () => {
      const found = mailsAbout('Failing once a day');
      return found.length >= 2 ? found : undefined;
    });
    expect(mails.map((m) => m.rcptTo[0]).sort()).toEqual([admin.email, owner.email].sort());
    expect(mails[0].subject).toBe('Batch export run failed: Failing once a day');
    expect(mails[0].text).toContain(
      `for the interval ${hours(0).toISOString()} to ${hours(1).toISOString()}:\n\n${run.latest_error}`,
    );

    // The webhook: a 500, then the same delivery again (same body, same id), each signed with its timestamp.
    const deliveries = await waitFor(async () =>
      receiver.deliveries.length >= 2 ? receiver.deliveries : undefined,
    );
    expect(deliveries.map((d) => d.answered)).toEqual([500, 200]);
    expect(deliveries[1].raw).toBe(deliveries[0].raw);
    expect(deliveries[1].headers['x-batch-export-delivery']).toBe(
      deliveries[0].headers['x-batch-export-delivery'],
    );
    for (const d of deliveries) {
      expect(verified(SECRET, d.headers, d.raw)).toBe(true);
      expect(verified('another-secret-of-enough-length', d.headers, d.raw)).toBe(false);
      expect(d.headers['x-batch-export-event']).toBe('batch_export_run.failed');
      expect(d.headers['content-type']).toBe('application/json');
    }
    // A body replayed with another timestamp does not verify.
    const replayed = {
      ...deliveries[1].headers,
      'x-batch-export-timestamp': String(Math.floor(Date.now() / 1000) + 1),
    };
    expect(verified(SECRET, replayed, deliveries[1].raw)).toBe(false);
    const payload = JSON.parse(deliveries[1].raw);
    expect(payload).toEqual({
      id: deliveries[0].headers['x-batch-export-delivery'],
      event: 'batch_export_run.failed',
      created_at: '2026-01-03T00:00:00.000Z',
      text: `Batch export "Failing once a day" to Snowflake: the run for ${hours(0).toISOString()} to ${hours(1).toISOString()} failed (Failed). Error: ${run.latest_error}`,
      organization_id: orgId,
      team_id: teamId,
      batch_export: {
        id,
        name: 'Failing once a day',
        model: 'persons',
        destination_type: 'Snowflake',
        paused: false,
      },
      run: {
        id: run.id,
        status: 'Failed',
        data_interval_start: hours(0).toISOString(),
        data_interval_end: hours(1).toISOString(),
        backfill_id: expect.any(String),
        latest_error: run.latest_error,
      },
      failures: null,
    });
    const logs = (
      await t.http
        .get(path(`/${id}/logs?limit=100`))
        .set(owner.auth)
        .expect(200)
    ).body.results as {
      level: string;
      message: string;
    }[];
    expect(logs.map((l) => `${l.level} ${l.message}`)).toContain(
      `WARNING Notification webhook batch_export_run.failed (delivery ${payload.id}), attempt 1 of 3: the receiver answered 500. It will be retried.`,
    );

    // A second failure the same day: its webhook, no e-mail.
    await backfill(id, hours(1), hours(2));
    await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2);
    await waitFor(async () => (receiver.deliveries.length >= 3 ? true : undefined));
    await sleep(1000);
    expect(mailsAbout('Failing once a day')).toHaveLength(2);

    // A day later, a failure is e-mailed again.
    t.clock.set(new Date('2026-01-04T00:00:01.000Z'));
    await backfill(id, hours(2), hours(3));
    await waitForRunsToEnd(t.http, owner.auth, orgId, id, 3);
    await waitFor(async () => (mailsAbout('Failing once a day').length >= 4 ? true : undefined));
    await waitFor(async () => (receiver.deliveries.length >= 4 ? true : undefined));
    await sleep(1000);
    expect(mailsAbout('Failing once a day')).toHaveLength(4);
    const [row] = await t.dataSource.query('SELECT failure_emailed_at FROM batch_exports WHERE id = $1', [
      id,
    ]);
    expect((row.failure_emailed_at as Date).toISOString()).toBe('2026-01-04T00:00:01.000Z');
  });

  it('an auto-pause is e-mailed even after a failure e-mail that day, and posted as batch_export.paused', async () => {
    const before = receiver.deliveries.length;
    const { body } = await t.http
      .post(path())
      .set(owner.auth)
      .send({
        name: 'Pausing',
        model: 'persons',
        interval: 'hour',
        destination: SNOWFLAKE,
        notification_webhook_url: receiver.url,
        notification_webhook_secret: SECRET,
      })
      .expect(201);
    await backfill(body.id, hours(0), hours(10));
    await waitFor(async () => {
      const [row] = await t.dataSource.query('SELECT paused FROM batch_exports WHERE id = $1', [body.id]);
      return row.paused ? true : undefined;
    });
    const paused = await waitFor(async () => {
      const found = mailsAbout('Pausing').filter((m) => m.subject.startsWith('Batch export paused'));
      return found.length >= 2 ? found : undefined;
    });
    expect(paused[0].text).toContain('was paused automatically: 10 of its last 50 runs failed');
    // One failure e-mail (to each of the two) for the nine failures before, one pause e-mail.
    expect(mailsAbout('Pausing').filter((m) => m.subject.startsWith('Batch export run failed'))).toHaveLength(
      2,
    );
    const events = await waitFor(async () => {
      const mine = receiver.deliveries
        .slice(before)
        .filter((d) => d.answered === 200)
        .map(
          (d) =>
            JSON.parse(d.raw) as {
              event: string;
              batch_export: { id: string; paused: boolean };
              failures: number;
            },
        );
      return mine.length >= 10 ? mine : undefined;
    });
    expect(events.filter((e) => e.event === 'batch_export_run.failed')).toHaveLength(9);
    const pause = events.find((e) => e.event === 'batch_export.paused')!;
    expect([pause.batch_export.id, pause.batch_export.paused, pause.failures]).toEqual([body.id, true, 10]);
  });

  it('/metrics: runs by status and destination type, records and bytes, and the lag of the exports furthest behind', async () => {
    const { body } = await t.http
      .post(path())
      .set(owner.auth)
      .send({
        name: 'Delivered',
        model: 'persons',
        interval: 'hour',
        destination: { type: 'NoOp', config: {} },
      })
      .expect(201);
    await backfill(body.id, hours(0), hours(2));
    await waitForRunsToEnd(t.http, owner.auth, orgId, body.id, 2);
    const now = t.clock.now();
    const value = (text: string, name: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    // The lag gauges are read from the database at most every 5 s: wait for a reading after the runs.
    const lagOf = (seconds: number) =>
      `batch_export_lag_seconds{batch_export_id="${body.id}",destination_type="NoOp"} ${seconds}`;
    const expectedLag = (now.getTime() - hours(2).getTime()) / 1000;
    const text = await waitFor(
      async () => {
        const scraped = await t.app.get(MetricsService).scrape();
        return scraped.includes(lagOf(expectedLag)) ? scraped : undefined;
      },
      15000,
      'the lag gauge',
    );
    const counts: { status: string; type: string; n: number }[] = await t.dataSource.query(
      `SELECT r.status, e.destination_type AS type, count(*)::int AS n
         FROM batch_export_runs r JOIN batch_exports e ON e.id = r.batch_export_id GROUP BY 1, 2`,
    );
    expect(counts.find((c) => c.status === 'Failed' && c.type === 'Snowflake')?.n).toBe(13);
    for (const c of counts) {
      expect(
        value(text, `batch_export_runs_finished_total{status="${c.status}",destination_type="${c.type}"}`),
      ).toBe(c.n);
    }
    expect(value(text, 'batch_export_runs_finished_total{status="Completed",destination_type="NoOp"}')).toBe(
      2,
    );
    expect(value(text, 'batch_export_records_exported_total{destination_type="NoOp"}')).toBe(3);
    expect(value(text, 'batch_export_records_exported_total{destination_type="Snowflake"}')).toBe(0);
    // The paused export has no lag series; the active Snowflake export never completed: lag from its creation.
    const [failing] = await t.dataSource.query(
      `SELECT id, extract(epoch FROM $1::timestamptz - created_at)::float8 AS lag FROM batch_exports
        WHERE name = 'Failing once a day'`,
      [now],
    );
    expect(
      value(text, `batch_export_lag_seconds{batch_export_id="${failing.id}",destination_type="Snowflake"}`),
    ).toBe(failing.lag);
    expect(text.match(/^batch_export_lag_seconds\{/gm)).toHaveLength(2);
    expect(value(text, 'batch_export_lag_max_seconds{destination_type="NoOp"}')).toBe(expectedLag);
    expect(value(text, 'batch_export_lag_max_seconds{destination_type="Snowflake"}')).toBe(failing.lag);
    expect(value(text, 'batch_export_active_exports{destination_type="Snowflake"}')).toBe(1);
    expect(value(text, 'batch_export_active_exports{destination_type="NoOp"}')).toBe(1);
  });

  it('another replica (or a restarted process) shares the daily limit kept in the database', async () => {
    // This process stops working runs: the replica, on the same database, takes them.
    await t.app.get(BatchExportWorker).onModuleDestroy();
    const replica = await createTestApp(
      {
        BATCH_EXPORT_WORKERS: 'true',
        BATCH_EXPORT_POLL_INTERVAL_MS: '100',
        BATCH_EXPORT_WEBHOOK_RETRY_DELAY_SECONDS: '1',
        SMTP_URL: smtp.url,
      },
      { databaseUrl: t.databaseUrl },
    );
    try {
      const [{ id }] = await t.dataSource.query(
        `SELECT id FROM batch_exports WHERE name = 'Failing once a day'`,
      );
      const deliveries = receiver.deliveries.length;
      // An hour after this export's last failure e-mail (2026-01-04T00:00:01Z): none from the replica.
      replica.clock.set(new Date('2026-01-04T01:00:01.000Z'));
      await backfill(id, hours(3), hours(4));
      await waitForRunsToEnd(t.http, owner.auth, orgId, id, 4);
      await waitFor(async () => (receiver.deliveries.length > deliveries ? true : undefined));
      await sleep(1000);
      expect(mailsAbout('Failing once a day')).toHaveLength(4);
      // A day after it: the replica e-mails.
      replica.clock.set(new Date('2026-01-05T00:00:02.000Z'));
      await backfill(id, hours(4), hours(5));
      await waitForRunsToEnd(t.http, owner.auth, orgId, id, 5);
      await waitFor(async () => (mailsAbout('Failing once a day').length >= 6 ? true : undefined));
      await sleep(1000);
      expect(mailsAbout('Failing once a day')).toHaveLength(6);
    } finally {
      await replica.close();
    }
  });
});

describe('batch export notification webhooks and the egress rules', () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let owner: TestUser;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_WEBHOOK_RETRY_DELAY_SECONDS: '1',
      BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'false',
    });
    t.clock.set(new Date('2026-01-03T00:00:00.000Z'));
    owner = await t.factories.user();
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('a webhook to a loopback address is refused (as the HTTP destination) and dropped, with a WARNING', async () => {
    const org = await t.factories.organization(owner);
    const path = (rest = '') => `/api/organizations/${org.id}/batch_exports${rest}`;
    const { body } = await t.http
      .post(path())
      .set(owner.auth)
      .send({
        name: 'Hook to loopback',
        model: 'persons',
        interval: 'hour',
        destination: SNOWFLAKE,
        notification_webhook_url: receiver.url,
        notification_webhook_secret: SECRET,
      })
      .expect(201);
    await t.http
      .post(path(`/${body.id}/backfill`))
      .set(owner.auth)
      .send({ start_at: hours(0).toISOString(), end_at: hours(1).toISOString() })
      .expect(200);
    const warning = await waitFor(async () => {
      const logs = (
        await t.http
          .get(path(`/${body.id}/logs?limit=100`))
          .set(owner.auth)
          .expect(200)
      ).body.results as { level: string; message: string }[];
      return logs.find((l) => l.level === 'WARNING' && l.message.startsWith('Notification webhook'));
    });
    expect(warning.message).toMatch(
      /^Notification webhook batch_export_run\.failed \(delivery [0-9a-f-]{36}\), attempt 1 of 8: the receiver was not reached: The destination host 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback, private, link-local or metadata address; batch exports are not delivered there \(BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS\)\. It is dropped\.$/,
    );
    await sleep(1500);
    expect(receiver.deliveries).toHaveLength(0);
    const [job] = await t.dataSource.query(
      `SELECT state FROM pgboss.job WHERE name = 'batch-export-notifications'`,
    );
    expect(job.state).toBe('completed');
  });
});
