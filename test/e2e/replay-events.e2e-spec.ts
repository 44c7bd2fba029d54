/**
 * Events put to work, end to end in a real browser: a session recorded from a test site with posthog-js on its
 * defaults (page views, autocapture clicks, a custom event, an exception and a console error) is found in
 * `/replay` by an event filter ("had event") and not by its negation ("did not have event"), while another
 * recording is; its inspector lists those events beside the recording's console lines; clicking the custom event
 * moves the player to its time. Then the `events` batch export of the hours of that session delivers exactly the
 * project's events of those hours to Postgres (a database on the machine's PostgreSQL) and to S3 (s3rver on
 * loopback).
 *
 * Needs a Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`); without one the test is skipped and its
 * name says why.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { waitForRunsToEnd } from '../support/batch-export-runs.js';
import {
  eventually,
  findChromium,
  type HeadlessChromium,
  launchChromium,
  posthogDefaults,
  sitePage,
  startSite,
  type TestSite,
  until,
} from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, snapshotEvent } from '../support/recordings.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';

const chromiumFound = findChromium();
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-artifacts', 'replay');
const HOUR_MS = 3600_000;
const BUCKET = 'replay-events';
const DEST_PASSWORD = 'replay-events-destination';
const CUSTOM_EVENT = 'checkout started';

/** The two-page site, initialising posthog-js on its defaults. */
function shop(token: () => string, apiHost: () => string) {
  return startSite((path) => {
    const init = posthogDefaults(token(), apiHost());
    if (path === '/')
      return sitePage(
        'Shop',
        '<h1>Shop</h1><p>Our finest goods.</p><button id="buy" type="button">Buy now</button> <a id="next" href="/cart">Go to cart</a>',
        init,
      );
    if (path === '/cart')
      return sitePage(
        'Cart',
        '<h1>Cart</h1><p>One item.</p><button id="pay" type="button">Pay</button>',
        init,
      );
    return null;
  });
}

interface StoredEvent {
  uuid: string;
  event: string;
  timestamp: Date;
  session_id: string | null;
  elements_chain: string;
}

const inspectorLines = (page: Page) =>
  page.evaluate<{ label: string; text: string; source: string; offset: number }[]>(
    `[...document.querySelectorAll('.inspector-line')].map((l) => ({
      label: l.querySelector('.inspector-label').textContent,
      text: l.querySelector('.inspector-text').textContent,
      source: l.dataset.source,
      offset: Number(l.dataset.offset),
    }))`,
  );

if ('reason' in chromiumFound) {
  describe('events in /replay and the events export, from a real browser', () => {
    it.skip(`posthog-js on its defaults in Chromium — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('events in /replay and the events export, from a real browser (headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let site: TestSite;
    let browser: HeadlessChromium;
    let owner: TestUser;
    let orgId: string;
    let project: { id: number; api_token: string };
    let dest: { name: string; url: string; user: string };
    let destination: pg.Client;
    let s3: RunningS3rver;
    /** The session recorded in Chromium, and one recorded without the custom event. */
    let sessionId: string;
    const otherSessionId = newSessionId('no-checkout');
    let events: StoredEvent[];

    beforeAll(async () => {
      s3 = await startS3rver([BUCKET]);
      t = await createTestApp({
        BATCH_EXPORT_WORKERS: 'true',
        BATCH_EXPORT_WORKER_CONCURRENCY: '2',
        BATCH_EXPORT_POLL_INTERVAL_MS: '100',
        BATCH_EXPORT_MAX_ATTEMPTS: '2',
        BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
      });
      await t.app.listen(0, '127.0.0.1');
      service = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      owner = await t.factories.user();
      const org = await t.factories.organization(owner);
      orgId = org.id;
      project = (await t.http.get(`/api/projects/${org.teams[0].id}`).set(owner.auth).expect(200)).body as {
        id: number;
        api_token: string;
      };
      dest = await createDestinationDatabase('replayevents', DEST_PASSWORD);
      destination = new pg.Client({ connectionString: dest.url });
      await destination.connect();
      site = await shop(
        () => project.api_token,
        () => service,
      );
      browser = await launchChromium(chromiumPath);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await site?.close();
      await destination?.end();
      await t?.close();
      await s3?.close();
      if (dest) await dropDestinationDatabase(dest.name);
    }, 60_000);

    it('records a session with page views, clicks, a custom event, an exception and a console error', async () => {
      // The service's clock runs in real time while the browser records: posthog-js's timestamps are corrected
      // against the time of receipt, and the recording's are the browser's own.
      const realTime = jest.spyOn(t.clock, 'now').mockImplementation(() => new Date());
      try {
        const page = await browser.context.newPage();
        await page.goto(`${site.url}/`);
        await page.waitForFunction('window.posthog && window.posthog.sessionRecordingStarted()', undefined, {
          timeout: 30_000,
        });
        sessionId = await page.evaluate<string>('posthog.get_session_id()');
        await page.waitForTimeout(1500);
        await page.click('#buy');
        await page.waitForTimeout(1500);
        await page.evaluate(`posthog.capture(${JSON.stringify(CUSTOM_EVENT)}, { plan: 'pro' })`);
        await page.waitForTimeout(1500);
        await page.evaluate(`console.error('Payment failed: card declined')`);
        await page.evaluate(`posthog.captureException(new Error('Card declined'))`);
        await page.waitForTimeout(1500);
        await page.click('#next');
        await page.waitForURL(`${site.url}/cart`);
        await page.waitForFunction('window.posthog && window.posthog.sessionRecordingStarted()', undefined, {
          timeout: 30_000,
        });
        await page.waitForTimeout(1500);
        await page.click('#pay');
        await page.waitForTimeout(1000);
        // Hiding the page makes the SDK send what it holds at once.
        await page.evaluate(`
          Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
          document.dispatchEvent(new Event('visibilitychange'));
        `);
        events = await eventually<StoredEvent[]>(async () => {
          const rows = (await t.dataSource.query(
            `SELECT uuid, event, "timestamp", session_id, elements_chain FROM events WHERE team_id = $1 ORDER BY "timestamp"`,
            [project.id],
          )) as StoredEvent[];
          const names = rows.map((r) => r.event);
          const pageviews = names.filter((n) => n === '$pageview').length;
          const pay = rows.some((r) => r.event === '$autocapture' && r.elements_chain.includes('text="Pay"'));
          if (pageviews < 2 || !names.includes(CUSTOM_EVENT) || !names.includes('$exception') || !pay) {
            return `events so far: ${names.join(', ')}`;
          }
          return rows;
        }, 60_000);
        await eventually(async () => {
          const [row] = (await t.dataSource.query(
            `SELECT console_error_count, click_count FROM session_recordings WHERE team_id = $1 AND session_id = $2`,
            [project.id, sessionId],
          )) as { console_error_count: number; click_count: number }[];
          return row && row.console_error_count >= 1 && row.click_count >= 3
            ? row
            : `recording so far: ${JSON.stringify(row)}`;
        }, 60_000);
        await page.close();
        // A second recording of the project, without the custom event (nor any event).
        const T1 = Date.now() - 30_000;
        await t.http
          .post('/s/')
          .send([
            snapshotEvent({
              token: project.api_token,
              sessionId: otherSessionId,
              events: [
                { type: 4, timestamp: T1, data: { href: `${site.url}/`, width: 800, height: 600 } },
                { type: 3, timestamp: T1 + 5000, data: { source: 1, positions: [] } },
              ],
            }),
          ])
          .expect(200);
        // What the SDK sends as the page goes (its $pageleave, …) belongs to the session too: read them all once
        // no more arrive.
        const storedEvents = () =>
          t.dataSource.query(
            `SELECT uuid, event, "timestamp", session_id, elements_chain FROM events WHERE team_id = $1 ORDER BY "timestamp"`,
            [project.id],
          ) as Promise<StoredEvent[]>;
        let count = -1;
        events = await eventually<StoredEvent[]>(async () => {
          const rows = await storedEvents();
          if (rows.length !== count) {
            count = rows.length;
            return `still arriving: ${rows.length}`;
          }
          return rows;
        }, 30_000);
      } finally {
        realTime.mockRestore();
      }
      // Whatever the SDK sends on its own besides ($pageleave, $web_vitals, …), this session's events are these.
      expect(events.every((e) => e.session_id === sessionId)).toBe(true);
    }, 180_000);

    it('finds the session in /replay by "had event", not by "did not have event"; its inspector lists the events and seeks to one', async () => {
      const key = (
        await t.factories.keyFor(owner, 'project:read,session_recording:write,query:read')
      ).Authorization.slice('Bearer '.length);
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      await page.setViewportSize({ width: 1500, height: 950 });
      await page.goto(`${service}/replay`);
      await page.fill('#replay-key', key);
      await page.click('.replay-key-form button[type=submit]');
      await page.locator(`tr[data-recording]`).first().waitFor({ timeout: 20_000 });
      const listed = () =>
        page.evaluate<string[]>(
          `[...document.querySelectorAll('tr[data-recording]')].map((r) => r.dataset.recording).sort()`,
        );
      expect(await listed()).toEqual([sessionId, otherSessionId].sort());

      // "Did not have event": the other recording only.
      await page.fill('#filter-not-event', CUSTOM_EVENT);
      await page.click('.replay-filters button[type=submit]');
      await until(page, `document.querySelectorAll('tr[data-recording]').length === 1`);
      expect(await listed()).toEqual([otherSessionId]);
      expect(new URL(page.url()).searchParams.get('exclude_events')).toBe(
        JSON.stringify([{ id: CUSTOM_EVENT, type: 'events' }]),
      );

      // "Had event" (with one of its properties): this session only.
      await page.fill('#filter-not-event', '');
      await page.fill('#filter-event', CUSTOM_EVENT);
      await page.fill('#filter-event-key', 'plan');
      await page.fill('#filter-event-value', 'pro');
      await page.click('.replay-filters button[type=submit]');
      await until(
        page,
        `[...document.querySelectorAll('tr[data-recording]')].map((r) => r.dataset.recording).join() === ${JSON.stringify(sessionId)}`,
      );
      const url = new URL(page.url());
      expect(JSON.parse(url.searchParams.get('events')!)).toEqual([
        {
          id: CUSTOM_EVENT,
          type: 'events',
          properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }],
        },
      ]);
      expect(url.searchParams.has('exclude_events')).toBe(false);
      // Another value of the property: no recording.
      await page.fill('#filter-event-value', 'free');
      await page.click('.replay-filters button[type=submit]');
      await until(page, `document.querySelectorAll('tr[data-recording]').length === 0`);
      await page.fill('#filter-event-value', 'pro');
      await page.click('.replay-filters button[type=submit]');
      await page.locator(`tr[data-recording="${sessionId}"]`).waitFor({ timeout: 20_000 });

      // The address keeps the filters: a reload shows the same list.
      await page.reload();
      await page.locator(`tr[data-recording="${sessionId}"]`).waitFor({ timeout: 20_000 });
      expect(await listed()).toEqual([sessionId]);
      expect(await page.inputValue('#filter-event')).toBe(CUSTOM_EVENT);
      expect(await page.inputValue('#filter-event-value')).toBe('pro');

      // Open it: the inspector lists the session's events beside the recording's console lines.
      await page.locator(`tr[data-recording="${sessionId}"] .replay-play`).click();
      await until(page, `document.querySelector('.inspector')?.dataset.events === 'loaded'`);
      await until(
        page,
        `[...document.querySelectorAll('.inspector-line')].some((l) => l.textContent.includes('Payment failed'))`,
      );
      const lines = await inspectorLines(page);
      const find = (label: string, text: string, source = 'events') =>
        lines.find((l) => l.label === label && l.text.includes(text) && l.source === source);
      expect(find('page view', `${site.url}/`)).toBeDefined();
      expect(find('page view', `${site.url}/cart`)).toBeDefined();
      expect(find('click', 'button “Buy now”')).toBeDefined();
      expect(find('click', '“Go to cart”')).toBeDefined();
      expect(find('click', 'button “Pay”')).toBeDefined();
      expect(find('custom event', CUSTOM_EVENT)).toBeDefined();
      expect(find('exception', 'Card declined')).toBeDefined();
      expect(find('error', 'Payment failed: card declined', 'recording')).toBeDefined();
      // The recording's own page views give way to the events API's, and are not counted.
      expect(lines.filter((l) => l.label === 'page view').every((l) => l.source === 'events')).toBe(true);
      expect(await page.textContent('.inspector-summary')).toBe(`${lines.length} of ${lines.length} lines`);
      // In time order, as the events were stored.
      const offsets = lines.map((l) => l.offset);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
      const byUuid = (name: string) => events.find((e) => e.event === name)!;
      const custom = find('custom event', CUSTOM_EVENT)!;
      const firstPageview = lines.find((l) => l.label === 'page view')!;
      expect(custom.offset - firstPageview.offset).toBe(
        new Date(byUuid(CUSTOM_EVENT).timestamp).getTime() -
          new Date(byUuid('$pageview').timestamp).getTime(),
      );
      // Markers on the seek bar: page views, errors, the custom event.
      expect(await page.locator('.player-marker-page').count()).toBeGreaterThanOrEqual(2);
      expect(await page.locator('.player-marker-error').count()).toBeGreaterThanOrEqual(1);
      expect(await page.locator('.player-marker-event').count()).toBe(1);
      // Filter by kind, then by text.
      await page.uncheck('.inspector-kind[data-kind="console"]');
      await until(
        page,
        `![...document.querySelectorAll('.inspector-line')].some((l) => l.dataset.kind === 'console')`,
      );
      await page.check('.inspector-kind[data-kind="console"]');
      await page.fill('.inspector-search', 'checkout');
      await until(page, `document.querySelectorAll('.inspector-line').length === 1`);
      await page.fill('.inspector-search', '');

      // The player plays on open: pause it in one step in the page (so it cannot end in between), then a click
      // on the custom event moves it to the event's time.
      await page.evaluate(`{
        const player = document.querySelector('.player');
        if (['loading', 'playing', 'buffering'].includes(player.dataset.state)) player.querySelector('.player-play').click();
      }`);
      await until(page, `['paused', 'ended'].includes(document.querySelector('.player').dataset.state)`);
      await page.locator('.inspector-line[data-kind="event"]', { hasText: CUSTOM_EVENT }).click();
      await until(
        page,
        `Math.abs(Number(document.querySelector('.player').dataset.time) - ${custom.offset}) < 50`,
      );
      await until(
        page,
        `document.querySelector('.inspector-current')?.textContent.includes(${JSON.stringify(CUSTOM_EVENT)})`,
      );
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'replay-events-inspector.png') });
      expect(problems).toEqual([]);
      await page.close();
    }, 120_000);

    it('the shared page lists the same events through the share’s public read, without the person', async () => {
      const accessToken = (
        await t.http
          .patch(`/api/projects/${project.id}/session_recordings/${sessionId}/sharing`)
          .set(owner.auth)
          .send({ enabled: true })
          .expect(200)
      ).body.access_token as string;
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      const eventReads: string[] = [];
      page.on('response', (r) => {
        if (new URL(r.url()).pathname.endsWith('/events'))
          eventReads.push(`${r.status()} ${new URL(r.url()).pathname}`);
      });
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.goto(`${service}/shared/${accessToken}`);
      await until(page, `document.querySelector('.inspector')?.dataset.events === 'loaded'`);
      await until(
        page,
        `[...document.querySelectorAll('.inspector-line')].some((l) => l.textContent.includes('Payment failed'))`,
      );
      const lines = await inspectorLines(page);
      const has = (label: string, text: string) =>
        lines.some((l) => l.label === label && l.text.includes(text));
      expect(has('custom event', CUSTOM_EVENT)).toBe(true);
      expect(has('click', 'button “Buy now”')).toBe(true);
      expect(has('page view', `${site.url}/cart`)).toBe(true);
      expect(has('exception', 'Card declined')).toBe(true);
      expect(eventReads).toEqual([`200 /api/shared/${accessToken}/events`]);
      const distinctId = (
        (await t.dataSource.query(`SELECT distinct_id FROM events WHERE team_id = $1 LIMIT 1`, [
          project.id,
        ])) as {
          distinct_id: string;
        }[]
      )[0].distinct_id;
      expect(await page.textContent('body')).not.toContain(distinctId);
      await page.screenshot({ path: join(ARTIFACTS, 'shared-events-inspector.png') });
      expect(problems).toEqual([]);
      await page.close();
    }, 60_000);

    it('the events export of the session’s hours delivers exactly those events to Postgres and S3', async () => {
      const pathOf = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
      const destUrl = new URL(dest.url);
      const create = async (body: Record<string, unknown>) =>
        (await t.http.post(pathOf()).set(owner.auth).send(body).expect(201)).body as { id: string };
      const postgres = await create({
        name: 'Events to Postgres',
        model: 'events',
        interval: 'hour',
        destination: {
          type: 'Postgres',
          config: {
            host: destUrl.hostname,
            port: Number(destUrl.port || 5432),
            database: dest.name,
            user: dest.user,
            password: DEST_PASSWORD,
            table_name: 'session_events',
          },
        },
      });
      const s3Export = await create({
        name: 'Events to S3',
        model: 'events',
        interval: 'hour',
        destination: {
          type: 'S3Compatible',
          config: {
            bucket_name: BUCKET,
            region: 'us-east-1',
            prefix: 'events',
            aws_access_key_id: 'S3RVER',
            aws_secret_access_key: 'S3RVER',
            endpoint_url: s3.endpoint,
            file_format: 'JSONLines',
            compression: 'gzip',
          },
        },
      });
      // The hours the session's events fall in; the clock after them, so that they have ended.
      const times = events.map((e) => new Date(e.timestamp).getTime());
      const start = Math.floor(Math.min(...times) / HOUR_MS) * HOUR_MS;
      const end = Math.floor(Math.max(...times) / HOUR_MS) * HOUR_MS + HOUR_MS;
      const hours = (end - start) / HOUR_MS;
      t.clock.set(new Date(end + HOUR_MS));
      const expected = (
        (await t.dataSource.query(
          `SELECT uuid FROM events WHERE team_id = $1 AND "timestamp" >= $2 AND "timestamp" < $3`,
          [project.id, new Date(start), new Date(end)],
        )) as { uuid: string }[]
      )
        .map((r) => r.uuid)
        .sort();
      expect(expected).toEqual(events.map((e) => e.uuid).sort());
      for (const e of [postgres, s3Export]) {
        await t.http
          .post(pathOf(`/${e.id}/backfill`))
          .set(owner.auth)
          .send({ start_at: new Date(start).toISOString(), end_at: new Date(end).toISOString() })
          .expect(200);
      }
      for (const e of [postgres, s3Export]) {
        const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, e.id, hours, 60_000);
        expect(runs.map((r) => r.status)).toEqual(Array(hours).fill('Completed'));
        expect(runs.reduce((sum, r) => sum + (r.records_completed ?? 0), 0)).toBe(expected.length);
      }

      const pgRows = (
        await destination.query(`SELECT uuid, event, properties, team_id FROM session_events ORDER BY uuid`)
      ).rows as { uuid: string; event: string; properties: Record<string, unknown>; team_id: number }[];
      expect(pgRows.map((r) => r.uuid)).toEqual(expected);
      expect(new Set(pgRows.map((r) => r.properties.$session_id))).toEqual(new Set([sessionId]));
      expect(pgRows.every((r) => r.team_id === project.id)).toBe(true);
      expect(pgRows.map((r) => r.event)).toEqual(
        expect.arrayContaining(['$pageview', '$autocapture', CUSTOM_EVENT, '$exception']),
      );

      const listedObjects = await s3.client.send(
        new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'events' }),
      );
      const records: { uuid: string; event: string }[] = [];
      for (const o of listedObjects.Contents ?? []) {
        const object = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: o.Key }));
        const text = gunzipSync(Buffer.from(await object.Body!.transformToByteArray())).toString('utf8');
        for (const line of text.split('\n')) if (line) records.push(JSON.parse(line));
      }
      expect(records.map((r) => r.uuid).sort()).toEqual(expected);
    }, 120_000);
  });
}
