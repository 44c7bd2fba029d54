/**
 * The real browser SDK records into this service: headless Chromium opens a page served from another origin
 * (a small HTTP server in this test, on its own port), the page loads posthog-js from node_modules and
 * initialises it against the service, and the test acts on the page like a user. The SDK fetches its remote
 * config and lazily loads the recorder from the service, posts rrweb batches to `/s/` cross-origin, and the
 * recording must then be readable through the public API with a real key: metadata computed from what was
 * done, snapshots holding a full snapshot.
 *
 * Needs a Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`); without one the test is skipped and
 * its name says why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import {
  eventually,
  findChromium,
  type HeadlessChromium,
  launchChromium,
  posthogDefaults,
  posthogInit,
  sitePage,
  startSite,
  type TestSite,
} from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { readAllSnapshots } from '../support/recordings.js';

const chromiumFound = findChromium();

const CLICKS = 5;
const TYPED = 'Ada Lovelace';
const LOGS = { log: 3, warn: 2, error: 1 };

interface SeenRequest {
  method: string;
  url: URL;
  status: number;
}

interface RrwebEvent {
  type: number;
  timestamp: number;
  data?: unknown;
}

/**
 * posthog-js sends large rrweb events packed (`cv: "2024-10"`: a full snapshot's `data`, and a mutation's
 * `texts`/`attributes`/`removes`/`adds`, as gzip in a latin1 string; `compressEventSync` in
 * `lib/src/extensions/replay/external/lazy-loaded-session-recorder.js`). The service stores and serves events
 * as sent, as PostHog does; a player unpacks them. Unpacking here checks the stored bytes are intact.
 */
function unpackSdkEvent(event: RrwebEvent & { cv?: string }): RrwebEvent {
  if (event.cv !== '2024-10' || event.type !== 2 || typeof event.data !== 'string') return event;
  return { ...event, data: JSON.parse(gunzipSync(Buffer.from(event.data, 'latin1')).toString('utf8')) };
}

interface Recording {
  id: string;
  distinct_id: string;
  click_count: number;
  keypress_count: number;
  mouse_activity_count: number;
  console_log_count: number;
  console_warn_count: number;
  console_error_count: number;
  start_url: string;
  snapshot_source: string;
  recording_duration: number;
}

function sdkVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('posthog-js/package.json') as { version: string }).version;
}

/** A newer posthog-js release than the installed one: the current release when this test was written. */
const NEWER_SDK = '1.449.2';

/**
 * The installed browser bundle as a site running release `version` has it: `posthog.version` is the
 * `LIB_VERSION` baked into the bundle, and it alone forms the versioned script paths the SDK asks for.
 */
function bundleAs(version: string): string {
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve('posthog-js/package.json')), 'dist', 'array.js');
  const bundle = readFileSync(file, 'utf8');
  const baked = `LIB_VERSION=${JSON.stringify(sdkVersion())}`;
  if (bundle.split(baked).length !== 2) throw new Error(`${file}: expected one ${baked}`);
  return bundle.replace(baked, `LIB_VERSION=${JSON.stringify(version)}`);
}

/**
 * A page running SDK release `version` with `strict_script_versioning: true`: no unversioned fallback, so the
 * recorder comes from the versioned path or not at all.
 */
function newerSdkPage(token: string, apiHost: string, version: string): string {
  // On the SDK's defaults (so it loads every script it loads lazily by default, surveys.js among them), with its
  // own session (memory persistence), not the one the other page of this origin left in localStorage.
  const init = posthogDefaults(token, apiHost).replace(
    '{',
    '{"strict_script_versioning":true,"persistence":"memory",',
  );
  return `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>Newer SDK</title></head>
  <body>
    <button id="buy" type="button">Buy</button>
    <script src="/vendor/posthog-array-${version}.js"></script>
    <script>${init}</script>
  </body>
</html>`;
}

/** The site: one page with a button, an input and a long body, initialising the SDK as docs/recordings.md says. */
function pageHtml(token: string, apiHost: string): string {
  return sitePage(
    'Test shop',
    `<h1>Test shop</h1>
    <button id="buy" type="button">Buy</button>
    <label>Name <input id="name" type="text" autocomplete="off"></label>
    <div style="height: 4000px; background: linear-gradient(#fff, #ccc)">Long content</div>
    <p id="bottom">The end</p>`,
    posthogInit(token, apiHost),
  );
}

if ('reason' in chromiumFound) {
  describe('recording from a real browser', () => {
    it.skip(`posthog-js in Chromium records into the service — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('recording from a real browser (posthog-js in headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let site: TestSite;
    let browser: HeadlessChromium;
    let owner: TestUser;
    let project: { id: number; api_token: string };
    let page: Page;
    const seen: SeenRequest[] = [];

    beforeAll(async () => {
      t = await createTestApp();
      await t.app.listen(0, '127.0.0.1');
      service = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      owner = await t.factories.user();
      const org = await t.factories.organization(owner);
      project = (await t.http.get(`/api/projects/${org.teams[0].id}`).set(owner.auth).expect(200)).body as {
        id: number;
        api_token: string;
      };
      const newerBundle = bundleAs(NEWER_SDK);
      site = await startSite((path) => {
        if (path === '/') return pageHtml(project.api_token, service);
        if (path === '/newer-sdk') return newerSdkPage(project.api_token, service, NEWER_SDK);
        if (path === `/vendor/posthog-array-${NEWER_SDK}.js`) {
          return { type: 'text/javascript; charset=utf-8', body: newerBundle };
        }
        return null;
      });
      browser = await launchChromium(chromiumPath);
      page = await browser.context.newPage();
      page.on('response', (response) => {
        const url = new URL(response.url());
        if (url.origin === service) {
          seen.push({ method: response.request().method(), url, status: response.status() });
        }
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await site?.close();
      await t?.close();
    }, 60_000);

    it('records clicks, typing, scrolling and console output, readable through the API', async () => {
      await page.goto(`${site.url}/`);
      // The SDK fetched its config from the service, turned recording on and loaded the recorder from it.
      // (Code run in the page is passed as text: it runs in the browser, not in this process.)
      await page.waitForFunction('window.posthog && window.posthog.sessionRecordingStarted()', undefined, {
        timeout: 30_000,
      });
      const { distinctId, sessionId } = await page.evaluate<{ distinctId: string; sessionId: string }>(
        '({ distinctId: posthog.get_distinct_id(), sessionId: posthog.get_session_id() })',
      );
      expect(distinctId).toMatch(/^[0-9a-f-]{36}$/);

      for (let i = 0; i < CLICKS; i++) await page.click('#buy');
      await page.click('#name');
      await page.keyboard.type(TYPED, { delay: 20 });
      await page.mouse.wheel(0, 1500);
      await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
      await page.evaluate(`
        for (let i = 0; i < ${LOGS.log}; i++) console.log('test log', i);
        for (let i = 0; i < ${LOGS.warn}; i++) console.warn('test warning', i);
        for (let i = 0; i < ${LOGS.error}; i++) console.error('test error', i);
      `);

      // The SDK sends its buffer every few seconds; hiding the page makes it send at once as well.
      await page.evaluate(`
        Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      `);

      const reader = await t.factories.keyFor(owner, 'session_recording:read');
      const recording = await eventually<Recording>(async () => {
        const res = await t.http
          .get(`/api/projects/${project.id}/session_recordings/${sessionId}`)
          .set(reader);
        if (res.status !== 200) {
          return `recording not there yet (${res.status}); the page's requests to the service: ${seen.map((s) => `${s.method} ${s.url.pathname} ${s.status}`).join(', ')}`;
        }
        const r = res.body as Recording;
        const complete =
          r.click_count >= CLICKS &&
          r.keypress_count > 0 &&
          r.console_log_count >= LOGS.log &&
          r.console_warn_count >= LOGS.warn &&
          r.console_error_count >= LOGS.error;
        if (!complete) {
          return `recording incomplete so far: ${JSON.stringify(r)}`;
        }
        return r;
      }, 60_000);

      expect(recording.id).toBe(sessionId);
      expect(recording.distinct_id).toBe(distinctId);
      expect(recording.click_count).toBeGreaterThanOrEqual(CLICKS);
      expect(recording.keypress_count).toBeGreaterThan(0);
      expect(recording.mouse_activity_count).toBeGreaterThanOrEqual(CLICKS);
      expect(recording.console_log_count).toBeGreaterThanOrEqual(LOGS.log);
      expect(recording.console_warn_count).toBeGreaterThanOrEqual(LOGS.warn);
      expect(recording.console_error_count).toBeGreaterThanOrEqual(LOGS.error);
      expect(recording.start_url).toBe(`${site.url}/`);
      expect(recording.snapshot_source).toBe('web');
      // Whole seconds, as PostHog sends them.
      expect(Number.isInteger(recording.recording_duration)).toBe(true);
      expect(recording.recording_duration).toBeGreaterThanOrEqual(0);

      // Read as a player reads it: the list of sources, then each source's JSON lines, windows merged by time.
      const stored = await readAllSnapshots(
        t.http,
        `/api/projects/${project.id}/session_recordings/${sessionId}/snapshots`,
        reader,
      );
      expect(stored.sources.length).toBeGreaterThan(0);
      const events = stored.events.map((s) => unpackSdkEvent(s.event as RrwebEvent));
      const full = events.find((e) => e.type === 2);
      expect(full).toBeDefined();
      // The full snapshot is the page the browser showed: its button is in the serialised DOM.
      expect(JSON.stringify(full?.data)).toContain('"id":"buy"');
      // The meta event carries the page's address; events are in time order.
      expect(events.find((e) => e.type === 4)?.data).toMatchObject({ href: `${site.url}/` });
      const times = events.map((e) => e.timestamp);
      expect(times).toEqual([...times].sort((a, b) => a - b));

      // What the SDK fetched from the service, cross-origin: config script, recorder, recording batches.
      const calls = seen.map((s) => `${s.method} ${s.url.pathname} ${s.status}`);
      expect(calls).toContain(`GET /array/${project.api_token}/config.js 200`);
      // The recorder, at the versioned path this SDK version asks for first (strict_script_versioning).
      expect(calls).toContain(`GET /static/${sdkVersion()}/lazy-recorder.js 200`);
      expect(calls.filter((c) => c === 'POST /s/ 200').length).toBeGreaterThan(0);
      // Configured as docs/recordings.md says, the SDK sent nothing the service does not store.
      expect(calls.filter((c) => !/^(GET \/array\/|GET \/static\/|POST \/s\/ )/.test(c))).toEqual([]);
    }, 150_000);

    it(`a site on another SDK release (${NEWER_SDK}, strict_script_versioning: true) loads its scripts and records, with no console error`, async () => {
      const other = await browser.context.newPage();
      const calls: string[] = [];
      const errors: string[] = [];
      other.on('response', (response) => {
        const url = new URL(response.url());
        if (url.origin === service)
          calls.push(`${response.request().method()} ${url.pathname} ${response.status()}`);
      });
      other.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      other.on('pageerror', (error) => errors.push(error.message));
      try {
        await other.goto(`${site.url}/newer-sdk`);
        await other.waitForFunction('window.posthog && window.posthog.sessionRecordingStarted()', undefined, {
          timeout: 30_000,
        });
        expect(await other.evaluate<string>('posthog.version')).toBe(NEWER_SDK);
        const sessionId = await other.evaluate<string>('posthog.get_session_id()');
        await other.click('#buy');
        await other.evaluate(`
          Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
          document.dispatchEvent(new Event('visibilitychange'));
        `);
        const reader = await t.factories.keyFor(owner, 'session_recording:read');
        const recording = await eventually<Recording>(async () => {
          const res = await t.http
            .get(`/api/projects/${project.id}/session_recordings/${sessionId}`)
            .set(reader);
          if (res.status !== 200)
            return `recording not there yet (${res.status}); calls: ${calls.join(', ')}`;
          const r = res.body as Recording;
          return r.click_count >= 1 ? r : `no click yet: ${JSON.stringify(r)}`;
        }, 60_000);
        expect(recording.start_url).toBe(`${site.url}/newer-sdk`);
        // The recorder at the path the newer SDK forms, served (before: 404, and no recording at all).
        expect(calls).toContain(`GET /static/${NEWER_SDK}/lazy-recorder.js 200`);
        expect(calls).toContain(`GET /static/${NEWER_SDK}/surveys.js 200`);
        // Every script at its versioned path; no request the service refused.
        expect(
          calls.filter((c) => c.startsWith('GET /static/') && !c.startsWith(`GET /static/${NEWER_SDK}/`)),
        ).toEqual([]);
        expect(calls.filter((c) => / [45]\d\d$/.test(c))).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await other.close();
      }
    }, 150_000);
  });
}
