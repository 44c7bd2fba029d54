/**
 * Watching recordings in a real browser. Headless Chromium records a test site with posthog-js into the service
 * (two tabs of one session, so two windows, sent in several requests, so several chunks, packed as posthog-js
 * packs them), then plays the recording:
 *
 * - through the share link (`/shared/:access_token`): the replayed document shows the site's text, styles and
 *   image, the click's effect (a packed mutation), playback time advances and the keyboard works, and the
 *   second tab is shown at the time the user was in it;
 * - embedded in another site (`/embedded/…` frames, `/shared/…` refuses to be framed);
 * - through the recordings browser (`/replay`): key, list, filter, play (marks it viewed), share;
 * - a recording of `cli demo`.
 *
 * On every page: no console error, no page error, no content security policy violation. Screenshots go to
 * test-artifacts/replay/. Needs a Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`); without one the
 * test is skipped and its name says why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleMessage, Page } from 'playwright-core';
import { runCli } from '../../src/cli-dispatch.js';
import {
  eventually,
  findChromium,
  type HeadlessChromium,
  launchChromium,
  posthogInit,
  startSite,
  type TestSite,
  until,
} from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

const chromiumFound = findChromium();

const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-artifacts', 'replay');
const TITLE = 'Quarterly espresso report 7F3A';
const SECOND_TAB = 'Second tab 9B1C';
const ORDER_DONE = 'Order placed: 42 cups';
/** The heading colour the site's stylesheet sets: the replay must show it too. */
const HEADING_COLOR = 'rgb(200, 30, 30)';

interface Recording {
  id: string;
  viewed: boolean;
  click_count: number;
  start_time: string;
  recording_duration: number;
}

/** The test site: a heading, a stylesheet, an image and a button whose click adds a paragraph. */
function sitePage(token: string, apiHost: string, heading: string): string {
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8">
    <title>Replay test shop</title>
    <link rel="stylesheet" href="/site.css">
  </head>
  <body>
    <h1 id="title">${heading}</h1>
    <img id="logo" src="/logo.svg" width="48" height="48" alt="Logo">
    <button id="order" type="button">Place order</button>
    <div id="result"></div>
    <script src="/vendor/posthog-array.js"></script>
    <script>
      document.getElementById('order').addEventListener('click', () => {
        const p = document.createElement('p');
        p.id = 'done';
        p.textContent = ${JSON.stringify(ORDER_DONE)};
        document.getElementById('result').appendChild(p);
      });
      ${posthogInit(token, apiHost)}
    </script>
  </body>
</html>`;
}

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48"><rect width="48" height="48" fill="#f54e00"/></svg>`;

/** The test site: its pages as `pages` says, its stylesheet and logo, and a page framing the service's players. */
function startShop(pages: (path: string) => string | null, service: string): Promise<TestSite> {
  return startSite((path, req) => {
    if (path === '/site.css')
      return { type: 'text/css', body: `h1 { color: ${HEADING_COLOR}; font-size: 40px; }` };
    if (path === '/logo.svg') return { type: 'image/svg+xml', body: LOGO };
    if (path === '/embed') {
      // Another site framing the service's player pages.
      const token = new URL(req.url ?? '/', 'http://x').searchParams.get('token') ?? '';
      return `<!doctype html>
<html><head><meta charset="utf-8"><title>Embedding site</title></head><body>
<iframe id="embedded" src="${service}/embedded/${token}" width="900" height="560"></iframe>
<iframe id="shared" src="${service}/shared/${token}" width="300" height="200"></iframe>
</body></html>`;
    }
    return pages(path);
  });
}

/**
 * Waits until `expression` is truthy in the page or frame. Polled with `evaluate` (run by the browser's
 * debugging protocol) because Playwright's waitForFunction compiles its predicate with `new Function`, which the
 * player pages' policy forbids, as it should.
 */

/** What went wrong on a page: console errors, uncaught errors, CSP violations (also those of its frames). */
interface Problems {
  list: string[];
  violations(page: Page): Promise<string[]>;
}

const WATCH_CSP = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
  }, true);
`;

function watch(page: Page, ignore: (message: string) => boolean = () => false): Problems {
  const list: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if ((m.type() === 'error' || /Content Security Policy/i.test(m.text())) && !ignore(m.text())) {
      list.push(`console ${m.type()}: ${m.text()}`);
    }
  });
  page.on('pageerror', (e) => list.push(`page error: ${e.message}`));
  return {
    list,
    violations: async (p) =>
      (
        await Promise.all(
          p.frames().map((f) => f.evaluate('window.__cspViolations || []').catch(() => [] as string[])),
        )
      ).flat() as string[],
  };
}

/** Whether a replayer frame of the page shows `text`. */
const replayShows = (text: string) => `
  [...document.querySelectorAll('.player-window-view:not([hidden]) .replayer-wrapper iframe')]
    .some((f) => (f.contentDocument?.body?.textContent || '').includes(${JSON.stringify(text)}))`;

const playerState = (page: Page) =>
  page.evaluate<{ state: string; time: number }>(
    `({ state: document.querySelector('.player').dataset.state, time: Number(document.querySelector('.player').dataset.time) })`,
  );

if ('reason' in chromiumFound) {
  describe('replay in a real browser', () => {
    it.skip(`the player plays recordings in Chromium — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('replay in a real browser (headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let site: TestSite;
    let browser: HeadlessChromium;
    let owner: TestUser;
    let project: { id: number; api_token: string };
    let sessionId: string;
    let accessToken: string;
    /** Milliseconds from the recording's start to the click in the second tab. */
    let secondTabAt: number;

    const sharing = async (id: string, enabled: boolean) =>
      (
        await t.http
          .patch(`/api/projects/${project.id}/session_recordings/${id}/sharing`)
          .set(owner.auth)
          .send({ enabled })
          .expect(200)
      ).body as { access_token: string; enabled: boolean };

    const newPage = async () => {
      const page = await browser.context.newPage();
      await page.addInitScript(WATCH_CSP);
      await page.setViewportSize({ width: 1280, height: 860 });
      return page;
    };

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      t = await createTestApp();
      await t.app.listen(0, '127.0.0.1');
      service = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      owner = await t.factories.user();
      const org = await t.factories.organization(owner);
      project = (await t.http.get(`/api/projects/${org.teams[0].id}`).set(owner.auth).expect(200)).body as {
        id: number;
        api_token: string;
      };
      site = await startShop(
        (path) =>
          path === '/'
            ? sitePage(project.api_token, service, TITLE)
            : path === '/second'
              ? sitePage(project.api_token, service, SECOND_TAB)
              : null,
        service,
      );
      browser = await launchChromium(chromiumPath);

      // Record: the first tab loads, the user clicks in a second tab of the same session, then orders in the first.
      const recordedAt = Date.now();
      const first = await browser.context.newPage();
      await first.goto(`${site.url}/`);
      await first.waitForFunction('window.posthog && window.posthog.sessionRecordingStarted()', undefined, {
        timeout: 30_000,
      });
      sessionId = await first.evaluate<string>('posthog.get_session_id()');
      await first.mouse.move(200, 200);
      await first.mouse.move(400, 300, { steps: 10 });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const second = await browser.context.newPage();
      await second.goto(`${site.url}/second`);
      await second.waitForFunction('window.posthog && window.posthog.sessionRecordingStarted()', undefined, {
        timeout: 30_000,
      });
      expect(await second.evaluate<string>('posthog.get_session_id()')).toBe(sessionId);
      await new Promise((resolve) => setTimeout(resolve, 800));
      const secondClick = Date.now();
      await second.mouse.move(300, 300, { steps: 5 });
      await second.click('#title');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await first.bringToFront();
      await first.mouse.move(100, 100, { steps: 5 });
      await first.click('#order');
      await first.waitForSelector('#done');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const page of [second, first]) {
        await page.evaluate(`
          Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
          document.dispatchEvent(new Event('visibilitychange'));
        `);
      }
      const recording = await eventually<Recording>(async () => {
        const res = await t.http
          .get(`/api/projects/${project.id}/session_recordings/${sessionId}`)
          .set(owner.auth);
        if (res.status !== 200) return `recording not there yet (${res.status})`;
        const r = res.body as Recording;
        return r.click_count >= 2 ? r : `not complete yet: ${JSON.stringify(r)}`;
      }, 60_000);
      // Both tabs' last batches are in once the second one's full snapshot and the order click are.
      await eventually(async () => {
        const list = await t.http
          .get(`/api/projects/${project.id}/session_recordings/${sessionId}/snapshots`)
          .set(owner.auth)
          .expect(200);
        const sources = (list.body as { sources: { blob_key: string }[] }).sources;
        return sources.length >= 2 ? true : `only ${sources.length} source(s) so far`;
      }, 30_000);
      secondTabAt = secondClick - Date.parse(recording.start_time);
      expect(secondTabAt).toBeGreaterThan(0);
      expect(Date.parse(recording.start_time)).toBeGreaterThanOrEqual(recordedAt - 1000);
      await first.close();
      await second.close();
      accessToken = (await sharing(sessionId, true)).access_token;
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      await site?.close();
      await t?.close();
    }, 60_000);

    it('stored what posthog-js sent: packed events, two windows, several chunks', async () => {
      const base = `/api/projects/${project.id}/session_recordings/${sessionId}/snapshots`;
      const { sources } = (await t.http.get(base).set(owner.auth).expect(200)).body as {
        sources: { blob_key: string }[];
      };
      const res = await t.http
        .get(
          `${base}?source=blob_v2&start_blob_key=${sources[0].blob_key}&end_blob_key=${sources[sources.length - 1].blob_key}`,
        )
        .set(owner.auth)
        .buffer(true)
        .parse((response, done) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          response.on('end', () => done(null, text));
        })
        .expect(200);
      const lines = (res.body as string)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as [string, { cv?: string; type: number }]);
      expect(new Set(lines.map(([w]) => w)).size).toBe(2);
      // The full snapshots came packed (cv 2024-10), as posthog-js sends them: the player has to unpack them.
      expect(lines.filter(([, e]) => e.type === 2).every(([, e]) => e.cv === '2024-10')).toBe(true);
      expect(sources.length).toBeGreaterThanOrEqual(2);
    });

    it('plays through the share link: text, styles, image, the click’s effect, time, keyboard, both tabs', async () => {
      const page = await newPage();
      const problems = watch(page);
      const snapshotRequests: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/snapshots')) snapshotRequests.push(new URL(r.url()).search);
      });
      await page.goto(`${service}/shared/${accessToken}`);
      await until(page, replayShows(TITLE), 30_000);
      const first = await playerState(page);
      // The page's facts: the start URL, the start time and the duration, and nothing about the person.
      expect(await page.textContent('.player-start-url')).toBe(`${site.url}/`);
      expect(await page.getAttribute('.player-start-time', 'datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(await page.textContent('.player-duration')).toMatch(/^\d+:\d\d$/);

      // It plays to the end: time advances, and the click in the first tab shows its paragraph.
      await until(page, `document.querySelector('.player').dataset.state === 'ended'`, 60_000);
      const end = await playerState(page);
      expect(end.time).toBeGreaterThan(first.time);
      expect(await page.evaluate<boolean>(replayShows(ORDER_DONE))).toBe(true);
      // Loaded chunk by chunk: the list, then the first source alone, then ranges.
      expect(snapshotRequests[0]).toBe('');
      expect(snapshotRequests[1]).toMatch(/^\?source=blob_v2&blob_key=/);

      // The replayed page has its stylesheet and its image, loaded under the player's policy.
      const replayed = await page.evaluate<{ color: string; image: number }>(`(() => {
        const doc = document.querySelector('.player-window-view:not([hidden]) iframe').contentDocument;
        return { color: getComputedStyle(doc.querySelector('h1')).color, image: doc.querySelector('img').naturalWidth };
      })()`);
      expect(replayed).toEqual({ color: HEADING_COLOR, image: 48 });
      await page.screenshot({ path: join(ARTIFACTS, 'shared-end.png') });

      // Keyboard: Home goes back to the start, space plays, time advances, space pauses.
      await page.keyboard.press('Home');
      expect((await playerState(page)).time).toBe(0);
      await page.keyboard.press('Space');
      await until(page, `Number(document.querySelector('.player').dataset.time) > 300`, 10_000);
      await page.keyboard.press('Space');
      const paused = await playerState(page);
      expect(paused.state).toBe('paused');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect((await playerState(page)).time).toBe(paused.time);
      await page.keyboard.press('ArrowRight');
      expect((await playerState(page)).time).toBe(Math.min(paused.time + 5000, end.time));

      // Two windows; at the time of the click in the second tab, the second tab is shown.
      expect(await page.locator('.player-window-view').count()).toBe(2);
      await page.evaluate(`(() => {
        const seek = document.querySelector('.player-seek');
        seek.value = String(${secondTabAt + 300});
        seek.dispatchEvent(new Event('input', { bubbles: true }));
      })()`);
      await until(page, replayShows(SECOND_TAB), 10_000);
      expect(await page.evaluate<boolean>(replayShows(TITLE))).toBe(false);
      expect(await page.textContent('.player-window')).toMatch(/^Window \d of 2$/);
      await page.screenshot({ path: join(ARTIFACTS, 'shared-second-tab.png') });

      expect(problems.list).toEqual([]);
      expect(await problems.violations(page)).toEqual([]);
      await page.close();
    }, 120_000);

    it('starts playing from the first chunk while the rest is still on its way', async () => {
      const page = await newPage();
      const problems = watch(page);
      // Every request after the first source's waits until released.
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const waiting: string[] = [];
      await page.route(/\/snapshots\?source=blob_v2&start_blob_key=/, async (route) => {
        waiting.push(route.request().url());
        await held;
        await route.continue();
      });
      await page.goto(`${service}/shared/${accessToken}`);
      await until(page, replayShows(TITLE), 30_000);
      await until(page, `['playing', 'buffering'].includes(document.querySelector('.player').dataset.state)`);
      expect(waiting).toHaveLength(1);
      // Only part of the recording is there: the time line shows how much, and playback waits at its end.
      expect(await page.evaluate<string>(`document.querySelector('.player-loaded').style.width`)).not.toBe(
        '100%',
      );
      expect((await playerState(page)).state).not.toBe('ended');
      release();
      await until(page, `document.querySelector('.player').dataset.state === 'ended'`, 60_000);
      expect(await page.evaluate<string>(`document.querySelector('.player-loaded').style.width`)).toBe(
        '100%',
      );
      expect(await page.evaluate<boolean>(replayShows(ORDER_DONE))).toBe(true);
      expect(problems.list).toEqual([]);
      expect(await problems.violations(page)).toEqual([]);
      await page.close();
    }, 90_000);

    it('embeds in another site, while the share page refuses to be framed', async () => {
      const page = await newPage();
      const problems = watch(page, (m) => m.includes("frame-ancestors 'none'"));
      const refusals: string[] = [];
      page.on('console', (m) => {
        if (m.text().includes("frame-ancestors 'none'")) refusals.push(m.text());
      });
      await page.goto(`${site.url}/embed?token=${accessToken}`);
      const embedded = page.frames().find((f) => f.url().includes('/embedded/'));
      expect(embedded).toBeDefined();
      await until(embedded!, replayShows(TITLE), 30_000);
      // The player without the page's facts.
      expect(await embedded!.locator('.player-header').count()).toBe(0);
      expect(await embedded!.locator('.player-controls').count()).toBe(1);
      await eventually(async () => (refusals.length > 0 ? true : 'no refusal yet'), 10_000);
      // The framed share page never loaded: no frame of the page is at its address, none holds a player.
      expect(page.frames().some((f) => f.url().includes('/shared/'))).toBe(false);
      const framedShare = await (await page.$('#shared'))?.contentFrame();
      expect(
        await framedShare?.evaluate<boolean>(`!!document.querySelector('.player')`).catch(() => false),
      ).toBe(false);
      await page.screenshot({ path: join(ARTIFACTS, 'embedded.png') });
      expect(problems.list).toEqual([]);
      expect(await problems.violations(page)).toEqual([]);
      await page.close();
    }, 60_000);

    it('plays, marks viewed, filters and shares through the recordings browser', async () => {
      await sharing(sessionId, false);
      const key = await t.factories.keyFor(
        owner,
        'project:read,session_recording:write,sharing_configuration:write',
      );
      const page = await newPage();
      const problems = watch(page);
      await page.goto(`${service}/replay`);
      await page.fill('#replay-key', key.Authorization.slice('Bearer '.length));
      await page.click('.replay-key-form button[type=submit]');
      const row = page.locator(`tr[data-recording="${sessionId}"]`);
      await row.waitFor({ timeout: 20_000 });
      expect(await row.getAttribute('class')).toBe('replay-unviewed');
      // The key is kept for the tab only.
      expect(await page.evaluate<string | null>(`sessionStorage.getItem('replay.personal_api_key')`)).toBe(
        key.Authorization.slice('Bearer '.length),
      );
      expect(await page.evaluate<number>('localStorage.length')).toBe(0);

      await row.locator('.replay-play').click();
      await until(page, replayShows(TITLE), 30_000);
      await until(page, `document.querySelector('.replay-viewed-state').textContent === 'Viewed'`);
      const viewed = await t.http
        .get(`/api/projects/${project.id}/session_recordings/${sessionId}`)
        .set(owner.auth);
      expect((viewed.body as Recording).viewed).toBe(true);
      expect(await row.getAttribute('class')).toBe('replay-viewed');
      await until(
        page,
        `Number(document.querySelector('.player').dataset.time) > 500 || document.querySelector('.player').dataset.state === 'ended'`,
      );

      await page.click('.replay-share-button');
      const link = page.locator('#replay-share-link');
      await link.waitFor();
      expect(await link.inputValue()).toBe(`${service}/shared/${accessToken}`);
      const state = await t.http
        .get(`/api/projects/${project.id}/session_recordings/${sessionId}/sharing`)
        .set(owner.auth);
      expect(state.body).toMatchObject({ enabled: true, access_token: accessToken });
      expect(await page.inputValue('#replay-share-embed')).toContain(`${service}/embedded/${accessToken}`);
      await page.screenshot({ path: join(ARTIFACTS, 'replay-browser.png'), fullPage: true });

      // The console-errors filter leaves this recording out (it has none). Beside the open player the filters
      // are behind "Show filters".
      await page.click('.replay-filters-toggle');
      await page.check('#filter-errors');
      await page.click('.replay-filters button[type=submit]');
      await until(
        page,
        `document.querySelector('.replay-list caption').textContent === 'Recordings 0–0 of 0'`,
      );
      expect(problems.list).toEqual([]);
      expect(await problems.violations(page)).toEqual([]);
      await page.close();
    }, 90_000);

    it('plays a recording of the demo command', async () => {
      // The CLI's own entry point, as `node dist/cli.js demo --project ID` runs it, on this test's database.
      const out: string[] = [];
      const code = await runCli(
        ['demo', '--project', String(project.id), '--sessions', '2', '--seed', '7'],
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
        (line) => out.push(line),
        (line) => out.push(line),
      );
      expect([code, out[0]]).toEqual([0, expect.stringMatching(/^created 2 recordings/)]);
      const list = await t.http
        .get(`/api/projects/${project.id}/session_recordings?date_from=-30d`)
        .set(owner.auth)
        .expect(200);
      const demo = (list.body as { results: { id: string; distinct_id: string }[] }).results.find((r) =>
        r.distinct_id.startsWith('demo-'),
      );
      expect(demo).toBeDefined();
      const token = (await sharing(demo!.id, true)).access_token;
      const page = await newPage();
      const problems = watch(page);
      await page.goto(`${service}/shared/${token}`);
      await until(page, replayShows('Demo shop — '), 30_000);
      await page.selectOption('.player-speed', '8');
      const before = await playerState(page);
      await until(
        page,
        `Number(document.querySelector('.player').dataset.time) > ${before.time + 2000}`,
        20_000,
      );
      await page.keyboard.press('End');
      expect((await playerState(page)).state).toBe('ended');
      await until(page, replayShows('Add to cart'));
      await page.screenshot({ path: join(ARTIFACTS, 'demo.png') });
      expect(problems.list).toEqual([]);
      expect(await problems.violations(page)).toEqual([]);
      await page.close();
    }, 60_000);
  });
}
