/**
 * The player's size and look, measured in a real browser at two common laptop sizes (1280×800 and 1440×900), on
 * a recording of `cli demo` (a 1440×900 page) with a rage click and a dead click among the session's events:
 *
 * - in `/replay` the recording is drawn at least 640 px wide, and the player's controls are inside the window
 *   without scrolling (the page is not scrolled; the seek bar and the play button are inside the viewport);
 * - the inspector names the element of `$rageclick` and `$dead_click` (tag and text), as it does for
 *   `$autocapture`, in `/replay` (events API) and on the share page (the public events read);
 * - the share page's inspector is drawn in the same sans-serif font as `/replay`'s.
 *
 * Screenshots go to test-artifacts/replay/ (replay-layout-<width>x<height>.png, shared-layout-<…>.png). Needs a
 * Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`); without one the test is skipped and its name says
 * why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { runCli } from '../../src/cli-dispatch.js';
import { findChromium, type HeadlessChromium, launchChromium, until } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';

const chromiumFound = findChromium();
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-artifacts', 'replay');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 1440, height: 900 },
];
/** The least width the recording is drawn at in `/replay`. */
const MIN_DRAWN_WIDTH = 640;

/** What the page shows of the player's geometry and the inspector's font. */
interface Layout {
  scrollY: number;
  viewport: { width: number; height: number };
  drawn: { width: number; height: number; top: number };
  controlsBottom: number;
  seekBottom: number;
  playBottom: number;
  inspectorFont: string;
  inspectorLines: string[];
}

const layout = (page: Page) =>
  page.evaluate<Layout>(`(() => {
    const rect = (selector) => document.querySelector(selector).getBoundingClientRect();
    const frame = rect('.player-window-view:not([hidden]) .replayer-wrapper iframe');
    return {
      scrollY: window.scrollY,
      viewport: { width: window.innerWidth, height: window.innerHeight },
      drawn: { width: frame.width, height: frame.height, top: frame.top },
      controlsBottom: rect('.player-controls').bottom,
      seekBottom: rect('.player-seek').bottom,
      playBottom: rect('.player-play').bottom,
      inspectorFont: getComputedStyle(document.querySelector('.inspector')).fontFamily,
      inspectorLines: [...document.querySelectorAll('.inspector-line')].map(
        (l) => l.querySelector('.inspector-label').textContent + ' ' + l.querySelector('.inspector-text').textContent,
      ),
    };
  })()`);

/** The drawn recording has its final size (the player scales it once the stage has its size). */
const DRAWN = `(() => {
  const f = document.querySelector('.player-window-view:not([hidden]) .replayer-wrapper iframe');
  return !!f && f.getBoundingClientRect().width > 50;
})()`;

const CLICK_LINES = [
  'rageclick button “Add to cart”',
  'dead click span “Free shipping over $50”',
  'click a “Checkout”',
];

if ('reason' in chromiumFound) {
  describe('the player’s layout in a real browser', () => {
    it.skip(`draws the recording large enough in Chromium — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('the player’s layout at laptop sizes (headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let browser: HeadlessChromium;
    let key: string;
    let accessToken: string;
    /** The font the inspector of `/replay` is drawn in, per viewport. */
    const replayFonts = new Map<string, string>();

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      t = await createTestApp();
      await t.app.listen(0, '127.0.0.1');
      service = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      const owner = await t.factories.user();
      const project = (await t.factories.organization(owner, 'Northwind Traders')).teams[0];
      const out: string[] = [];
      const code = await runCli(
        ['demo', '--project', String(project.id), '--sessions', '1', '--seed', '7'],
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
        (line) => out.push(line),
        (line) => out.push(line),
      );
      expect([code, out[0]]).toEqual([0, expect.stringMatching(/^created 1 recordings?/)]);
      const recording = (
        (
          await t.http
            .get(`/api/projects/${project.id}/session_recordings?date_from=-30d`)
            .set(owner.auth)
            .expect(200)
        ).body as { results: { id: string; start_time: string; distinct_id: string }[] }
      ).results[0];
      const at = (ms: number) => new Date(Date.parse(recording.start_time) + ms).toISOString();
      const props = (extra: Record<string, unknown>) => ({
        $session_id: recording.id,
        $current_url: 'https://shop.example/cart',
        ...extra,
      });
      await t.http
        .post('/batch/')
        .send({
          api_key: project.api_token,
          batch: [
            {
              event: '$rageclick',
              distinct_id: recording.distinct_id,
              timestamp: at(1000),
              properties: props({
                $event_type: 'click',
                $elements_chain: 'button.add:attr__id="add"nth-child="1"nth-of-type="1"text="Add to cart"',
              }),
            },
            {
              event: '$dead_click',
              distinct_id: recording.distinct_id,
              timestamp: at(2000),
              // posthog-js 1.x sends the elements as a list: the service writes the chain out of it.
              properties: props({
                $elements: [
                  { tag_name: 'span', $el_text: 'Free shipping over $50', nth_child: 2, nth_of_type: 1 },
                  { tag_name: 'div', attr__class: 'banner', nth_child: 1, nth_of_type: 1 },
                ],
              }),
            },
            {
              event: '$autocapture',
              distinct_id: recording.distinct_id,
              timestamp: at(3000),
              properties: props({
                $event_type: 'click',
                $elements_chain: 'a:href="/checkout"nth-child="3"nth-of-type="1"text="Checkout"',
              }),
            },
          ],
        })
        .expect(200);
      accessToken = (
        (
          await t.http
            .patch(`/api/projects/${project.id}/session_recordings/${recording.id}/sharing`)
            .set(owner.auth)
            .send({ enabled: true })
            .expect(200)
        ).body as { access_token: string }
      ).access_token;
      key = (
        await t.factories.keyFor(owner, 'project:read,session_recording:write,query:read')
      ).Authorization.slice('Bearer '.length);
      browser = await launchChromium(chromiumPath);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await t?.close();
    }, 60_000);

    for (const size of SIZES) {
      const name = `${size.width}x${size.height}`;

      it(`at ${name}, /replay draws the recording at least ${MIN_DRAWN_WIDTH} px wide, its controls in the window, and names the clicked elements`, async () => {
        const page = await browser.context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (e) => problems.push(e.message));
        await page.setViewportSize(size);
        await page.goto(`${service}/replay`);
        await page.fill('#replay-key', key);
        await page.click('.replay-key-form button[type=submit]');
        await page.locator('tr[data-recording] .replay-play').first().click();
        await until(page, `document.querySelector('.player')?.dataset.state === 'playing'`, 20_000);
        await until(page, DRAWN);
        await until(
          page,
          `[...document.querySelectorAll('.inspector-text')].some((l) => l.textContent.includes('Checkout'))`,
        );
        // The player's resize settles before it is measured.
        await page.waitForTimeout(300);
        const shown = await layout(page);
        await page.screenshot({ path: join(ARTIFACTS, `replay-layout-${name}.png`) });

        expect(shown.viewport).toEqual(size);
        expect(shown.scrollY).toBe(0);
        expect(shown.drawn.width).toBeGreaterThanOrEqual(MIN_DRAWN_WIDTH);
        expect(shown.drawn.top).toBeGreaterThanOrEqual(0);
        expect(shown.controlsBottom).toBeLessThanOrEqual(size.height);
        expect(shown.seekBottom).toBeLessThanOrEqual(size.height);
        expect(shown.playBottom).toBeLessThanOrEqual(size.height);
        for (const line of CLICK_LINES) expect(shown.inspectorLines).toContain(line);
        expect(shown.inspectorFont).toMatch(/sans-serif$/);
        replayFonts.set(name, shown.inspectorFont);
        expect(problems).toEqual([]);
        await page.close();
      }, 90_000);

      it(`at ${name}, the share page's inspector names the clicked elements in /replay's font`, async () => {
        const page = await browser.context.newPage();
        const problems: string[] = [];
        page.on('pageerror', (e) => problems.push(e.message));
        await page.setViewportSize(size);
        await page.goto(`${service}/shared/${accessToken}`);
        await until(page, DRAWN, 20_000);
        await until(
          page,
          `[...document.querySelectorAll('.inspector-text')].some((l) => l.textContent.includes('Checkout'))`,
        );
        await page.waitForTimeout(300);
        const shown = await layout(page);
        await page.screenshot({ path: join(ARTIFACTS, `shared-layout-${name}.png`) });

        for (const line of CLICK_LINES) expect(shown.inspectorLines).toContain(line);
        expect(replayFonts.get(name)).toBeDefined();
        expect(shown.inspectorFont).toBe(replayFonts.get(name));
        expect(shown.controlsBottom).toBeLessThanOrEqual(size.height);
        expect(problems).toEqual([]);
        await page.close();
      }, 90_000);
    }
  });
}
