/**
 * The recordings browser (`/replay`) and the player's controls in a real browser, on recordings of `cli demo`:
 *
 * - it opens on a project that has recordings when the key's current project has none, and says so;
 * - an open player sits beside the list without covering it, at 1280 and 1920 px (bounding boxes), so a click on
 *   another row's Play opens that recording; the list keeps one line per row; Close gives the list its width back;
 * - an empty list says whether the project or the filters are empty;
 * - the play button shows ▶ once paused, by click, Space and `k`; the header's duration is the clock's;
 * - a share link that shares nothing answers a 404 page in the player's colours, its style allowed by the policy.
 *
 * Screenshots go to test-artifacts/replay/. Needs a Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`);
 * without one the test is skipped and its name says why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleMessage, Page } from 'playwright-core';
import { runCli } from '../../src/cli-dispatch.js';
import { findChromium, type HeadlessChromium, launchChromium, until } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

const chromiumFound = findChromium();
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-artifacts', 'replay');
const SESSIONS = 3;

const WATCH_CSP = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
  }, true);
`;

/** Console errors, page errors and policy violations of a page. */
function watch(page: Page): { list: string[]; violations: () => Promise<string[]> } {
  const list: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) list.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => list.push(`page error: ${e.message}`));
  return {
    list,
    violations: async () => (await page.evaluate<string[]>('window.__cspViolations || []')) ?? [],
  };
}

/** Polls `expression` in the page (the pages' policy forbids the `new Function` of waitForFunction). */

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const box = async (page: Page, selector: string): Promise<Box> => {
  const b = await page.locator(selector).first().boundingBox();
  if (!b) throw new Error(`${selector} is not shown`);
  return b;
};

const player = (page: Page) =>
  page.evaluate<{ state: string; button: string; label: string; clock: string; duration: string }>(`(() => {
    const p = document.querySelector('.player');
    const b = p.querySelector('.player-play');
    return {
      state: p.dataset.state,
      button: b.textContent,
      label: b.getAttribute('aria-label'),
      clock: p.querySelector('.player-clock').textContent,
      duration: p.querySelector('.player-duration')?.textContent ?? '',
    };
  })()`);

if ('reason' in chromiumFound) {
  describe('the recordings browser in a real browser', () => {
    it.skip(`lays out, opens and pauses recordings in Chromium — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('the recordings browser in a real browser (headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let browser: HeadlessChromium;
    let owner: TestUser;
    let key: string;
    /** The key's current project (no recordings) and a project of another organization with recordings. */
    let empty: { id: number; name: string; organization: string };
    let full: { id: number; name: string; organization: string };
    let fullOrganization: string;
    let recordings: { id: string; start_time: string }[];

    const signIn = async (width: number) => {
      const page = await browser.context.newPage();
      await page.addInitScript(WATCH_CSP);
      await page.setViewportSize({ width, height: 900 });
      const problems = watch(page);
      await page.goto(`${service}/replay`);
      await page.fill('#replay-key', key);
      await page.click('.replay-key-form button[type=submit]');
      await page.locator('tr[data-recording]').first().waitFor({ timeout: 20_000 });
      return { page, problems };
    };

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      t = await createTestApp();
      await t.app.listen(0, '127.0.0.1');
      service = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      owner = await t.factories.user();
      await t.factories.organization(owner, 'Northwind Traders');
      await t.factories.organization(owner, 'Contoso Retail');
      const me = (await t.http.get('/api/users/@me').set(owner.auth).expect(200)).body as {
        team: { id: number; name: string; organization: string };
        organizations: { id: string; name: string }[];
      };
      empty = me.team;
      const other = me.organizations.find((o) => o.id !== empty.organization)!;
      fullOrganization = other.name;
      const projects = (
        await t.http.get(`/api/organizations/${other.id}/projects`).set(owner.auth).expect(200)
      ).body as { results: { id: number; name: string; organization: string }[] };
      full = projects.results[0];
      const out: string[] = [];
      const code = await runCli(
        ['demo', '--project', String(full.id), '--sessions', String(SESSIONS), '--seed', '11'],
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
        (line) => out.push(line),
        (line) => out.push(line),
      );
      expect([code, out[0]]).toEqual([0, expect.stringMatching(/^created 3 recordings/)]);
      // Long person names: they are what wrapped onto several lines.
      recordings = (
        (
          await t.http
            .get(`/api/projects/${full.id}/session_recordings?date_from=-30d`)
            .set(owner.auth)
            .expect(200)
        ).body as { results: { id: string; start_time: string }[] }
      ).results;
      expect(recordings).toHaveLength(SESSIONS);
      key = (
        await t.factories.keyFor(owner, 'project:read,session_recording:write,sharing_configuration:write')
      ).Authorization.slice('Bearer '.length);
      browser = await launchChromium(chromiumPath);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await t?.close();
    }, 60_000);

    it('opens on the project that has recordings when the current one has none, and says so', async () => {
      expect(empty.id).not.toBe(full.id);
      const { page, problems } = await signIn(1280);
      expect(await page.inputValue('#replay-org')).toBe(full.organization);
      expect(await page.inputValue('#replay-project')).toBe(String(full.id));
      expect(await page.locator('tr[data-recording]').count()).toBe(SESSIONS);
      expect(await page.textContent('.replay-note')).toBe(
        `The key’s current project, ${empty.name}, has no recordings in the last 7 days: ` +
          `showing ${fullOrganization} / ${full.name}, which has.`,
      );
      expect(problems.list).toEqual([]);
      expect(await problems.violations()).toEqual([]);
      await page.close();
    }, 60_000);

    for (const width of [1280, 1920]) {
      it(`at ${width} px: the player sits beside the list, another row's Play opens that recording, Close gives the width back`, async () => {
        const { page, problems } = await signIn(width);
        // Closed: the list has the page's width, one line per row.
        const app = await box(page, '#app');
        const wideList = await box(page, '.replay-list');
        expect(wideList.width).toBeGreaterThan(app.width - 80);
        const rowHeights = await page.$$eval('tr[data-recording]', (rows) =>
          rows.map((r) => r.getBoundingClientRect().height),
        );
        for (const height of rowHeights) expect(height).toBeLessThan(45);

        const rows = page.locator('tr[data-recording]');
        const first = (await rows.nth(0).getAttribute('data-recording'))!;
        const second = (await rows.nth(1).getAttribute('data-recording'))!;
        await rows.nth(0).locator('.replay-play').click();
        await until(page, `document.querySelector('.player')?.dataset.state === 'playing'`, 20_000);
        expect(await rows.nth(0).getAttribute('aria-current')).toBe('true');

        await page.screenshot({ path: join(ARTIFACTS, `replay-browser-${width}.png`) });
        // Open: list and player side by side, not overlapping; the table inside its column.
        const column = await box(page, '.replay-list-column');
        const table = await box(page, '.replay-list');
        const viewer = await box(page, '.replay-viewer');
        expect(column.x + column.width).toBeLessThanOrEqual(viewer.x);
        expect(table.x + table.width).toBeLessThanOrEqual(column.x + column.width + 0.5);
        expect(viewer.width).toBeGreaterThan(column.width);
        expect(await page.$eval('.replay-list-column', (c) => c.scrollWidth <= c.clientWidth)).toBe(true);
        for (const height of await page.$$eval('tr[data-recording]', (r) =>
          r.map((row) => row.getBoundingClientRect().height),
        ))
          expect(height).toBeLessThan(45);
        // What is under the second row's Play button is that button, not the player.
        const play = await box(page, `tr[data-recording="${second}"] .replay-play`);
        expect(play.x + play.width).toBeLessThanOrEqual(viewer.x);
        expect(
          await page.evaluate<boolean>(
            `document.elementFromPoint(${play.x + play.width / 2}, ${play.y + play.height / 2})
              === document.querySelector('tr[data-recording="${second}"] .replay-play')`,
          ),
        ).toBe(true);

        await page.click(`tr[data-recording="${second}"] .replay-play`);
        await until(
          page,
          `document.querySelector('tr[data-recording="${second}"]').getAttribute('aria-current') === 'true'`,
        );
        expect(await rows.nth(0).getAttribute('aria-current')).toBeNull();
        const secondStart = recordings.find((r) => r.id === second)!.start_time;
        expect(await page.getAttribute('.player-start-time', 'datetime')).toBe(
          new Date(secondStart).toISOString(),
        );
        expect(await page.locator('.player').count()).toBe(1);
        expect(first).not.toBe(second);

        await page.click('.replay-close');
        expect(await page.locator('.replay-viewer').isHidden()).toBe(true);
        expect(await page.locator('.player').count()).toBe(0);
        expect((await box(page, '.replay-list')).width).toBeGreaterThan(app.width - 80);
        expect(
          await page.evaluate<boolean>(
            `document.activeElement === document.querySelector('tr[data-recording="${second}"] .replay-play')`,
          ),
        ).toBe(true);
        expect(problems.list).toEqual([]);
        expect(await problems.violations()).toEqual([]);
        await page.close();
      }, 60_000);
    }

    it('says whether the project or the filters leave the list empty', async () => {
      const { page, problems } = await signIn(1280);
      await page.selectOption('#replay-org', empty.organization);
      await until(page, `document.querySelector('#replay-project').value === '${empty.id}'`);
      await until(page, `!!document.querySelector('.replay-empty')`);
      expect(await page.textContent('.replay-empty')).toBe(
        'This project has no recordings yet. They appear here once a site with the PostHog snippet records sessions into it.',
      );
      expect(await page.textContent('.replay-note')).toBe('');

      await page.selectOption('#replay-org', full.organization);
      await page.locator('tr[data-recording]').first().waitFor();
      await page.fill('#filter-person', 'nobody-recorded-this');
      await page.click('.replay-filters button[type=submit]');
      await until(page, `!!document.querySelector('.replay-empty')`);
      const message = `No recordings match these filters. The project has ${SESSIONS} recordings in all: widen the date range or clear the filters.`;
      expect(await page.textContent('.replay-empty')).toBe(message);
      expect(await page.textContent('.replay-status')).toBe(message);
      expect(problems.list).toEqual([]);
      await page.close();
    }, 60_000);

    it('shows ▶ once paused, by click, Space and k; the header’s duration is the clock’s', async () => {
      const token = (
        (
          await t.http
            .patch(`/api/projects/${full.id}/session_recordings/${recordings[0].id}/sharing`)
            .set(owner.auth)
            .send({ enabled: true })
            .expect(200)
        ).body as { access_token: string }
      ).access_token;
      const page = await browser.context.newPage();
      await page.addInitScript(WATCH_CSP);
      await page.setViewportSize({ width: 1280, height: 860 });
      const problems = watch(page);
      await page.goto(`${service}/shared/${token}`);
      await until(page, `document.querySelector('.player')?.dataset.state === 'playing'`, 20_000);
      expect(await player(page)).toMatchObject({ button: '❚❚', label: 'Pause' });

      await page.click('.player-play');
      expect(await player(page)).toMatchObject({ state: 'paused', button: '▶', label: 'Play' });
      await page.click('.player-play');
      expect(await player(page)).toMatchObject({ state: 'playing', button: '❚❚', label: 'Pause' });

      // The keyboard, with the focus off the button (a focused button answers Space itself).
      await page.evaluate('document.activeElement.blur()');
      for (const key of ['Space', 'k']) {
        await page.keyboard.press(key);
        expect(await player(page)).toMatchObject({ state: 'paused', button: '▶', label: 'Play' });
        await page.keyboard.press(key);
        expect(await player(page)).toMatchObject({ state: 'playing', button: '❚❚', label: 'Pause' });
      }
      await page.keyboard.press('k');
      await page.selectOption('.player-speed', '8');
      await page.keyboard.press('End');

      const shown = await player(page);
      expect(shown.duration).toMatch(/^\d+:\d\d$/);
      expect(shown.clock.split(' / ')[1]).toBe(shown.duration);
      expect(shown).toMatchObject({ state: 'ended', button: '▶' });
      expect(shown.clock.split(' / ')[0]).toBe(shown.duration);
      await page.screenshot({ path: join(ARTIFACTS, 'shared-player.png') });
      expect(problems.list).toEqual([]);
      expect(await problems.violations()).toEqual([]);
      await page.close();
    }, 60_000);

    it('answers a share link that shares nothing with a 404 page in the player’s colours', async () => {
      const page = await browser.context.newPage();
      await page.addInitScript(WATCH_CSP);
      await page.setViewportSize({ width: 1280, height: 800 });
      const problems = watch(page);
      const response = await page.goto(`${service}/shared/${'z'.repeat(43)}`);
      expect(response?.status()).toBe(404);
      expect(await page.textContent('h1')).toBe('Recording not found');
      const look = await page.evaluate<{ background: string; color: string; accent: string }>(`({
        background: getComputedStyle(document.documentElement).backgroundColor,
        color: getComputedStyle(document.querySelector('h1')).color,
        accent: getComputedStyle(document.querySelector('main')).borderLeftColor,
      })`);
      expect(look).toEqual({
        background: 'rgb(29, 31, 39)',
        color: 'rgb(245, 245, 247)',
        accent: 'rgb(245, 78, 0)',
      });
      await page.screenshot({ path: join(ARTIFACTS, 'shared-not-found.png') });
      expect(problems.list.filter((line) => !/404 \(Not Found\)/.test(line))).toEqual([]);
      expect(await problems.violations()).toEqual([]);
      await page.close();
    }, 60_000);
  });
}
