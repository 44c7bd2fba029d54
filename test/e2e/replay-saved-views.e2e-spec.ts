/**
 * Saved views (recording playlists) in the recordings browser, in a real browser: picking a view applies its
 * filters to the list, the current filters are saved as a new view, and a played recording is pinned to a view.
 * Recordings come from the demo command. Needs a Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`);
 * without one the test is skipped and its name says why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { runCli } from '../../src/cli-dispatch.js';
import {
  findChromium,
  type HeadlessChromium,
  launchChromium,
  until as waitUntil,
} from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

const chromiumFound = findChromium();

/** Waits for `expression` in the page; on timeout says what the list, the status and the saved views show. */
const until = (page: Page, expression: string, timeoutMs = 20_000) =>
  waitUntil(
    page,
    expression,
    timeoutMs,
    `[document.querySelector('.replay-list caption')?.textContent, document.querySelector('.replay-status')?.textContent, document.querySelector('.replay-saved-views-message')?.textContent].join(' | ')`,
  );

interface Recording {
  id: string;
  recording_duration: number;
  console_error_count: number;
}

/** Waits until `expression` is truthy in the page (polled: the page's policy forbids `new Function`). */

const listedIds = (page: Page) =>
  page.evaluate<string[]>(
    `[...document.querySelectorAll('.replay-list tbody tr')].map((row) => row.dataset.recording)`,
  );

if ('reason' in chromiumFound) {
  describe('saved views in a real browser', () => {
    it.skip(`saved views apply, save and pin in Chromium — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('saved views in the recordings browser (headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let browser: HeadlessChromium;
    let owner: TestUser;
    let projectId: number;
    let recordings: Recording[];

    beforeAll(async () => {
      t = await createTestApp();
      await t.app.listen(0, '127.0.0.1');
      service = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      owner = await t.factories.user();
      projectId = (await t.factories.organization(owner)).teams[0].id;
      const out: string[] = [];
      const code = await runCli(
        ['demo', '--project', String(projectId), '--sessions', '4', '--seed', '11'],
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
        (line) => out.push(line),
        (line) => out.push(line),
      );
      expect([code, out[0]]).toEqual([0, expect.stringMatching(/^created 4 recordings/)]);
      recordings = (
        (
          await t.http
            .get(`/api/projects/${projectId}/session_recordings?date_from=-30d`)
            .set(owner.auth)
            .expect(200)
        ).body as { results: Recording[] }
      ).results;
      expect(recordings).toHaveLength(4);
      browser = await launchChromium(chromiumPath);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await t?.close();
    }, 60_000);

    it('applies a picked view’s filters, saves the current filters as a view, and pins a played recording', async () => {
      // A view of the longer recordings: longer than the shortest one (durations are whole seconds, truncated).
      const shortest = Math.min(...recordings.map((r) => r.recording_duration));
      const predicates = [{ type: 'recording', key: 'duration', operator: 'gt', value: shortest + 1 }];
      const longer = (
        (
          await t.http
            .get(`/api/projects/${projectId}/session_recordings`)
            .query({ date_from: '-30d', having_predicates: JSON.stringify(predicates) })
            .set(owner.auth)
            .expect(200)
        ).body as { results: Recording[] }
      ).results.map((r) => r.id);
      expect(longer.length).toBeGreaterThan(0);
      expect(longer.length).toBeLessThan(4);
      const view = (
        await t.http
          .post(`/api/projects/${projectId}/session_recording_playlists`)
          .set(owner.auth)
          .send({
            name: 'Long sessions',
            filters: {
              date_from: '-30d',
              having_predicates: predicates,
            },
          })
          .expect(201)
      ).body as { short_id: string };

      const key = await t.factories.keyFor(
        owner,
        'project:read,session_recording:write,session_recording_playlist:write',
      );
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      await page.setViewportSize({ width: 1280, height: 860 });
      await page.goto(`${service}/replay`);
      await page.fill('#replay-key', key.Authorization.slice('Bearer '.length));
      await page.click('.replay-key-form button[type=submit]');
      await until(page, `document.querySelector('#saved-view option[value="${view.short_id}"]')`);

      await page.selectOption('#saved-view', view.short_id);
      await until(
        page,
        `document.querySelector('.replay-list caption')?.textContent === 'Recordings 1–${longer.length} of ${longer.length}'`,
      );
      expect((await listedIds(page)).sort()).toEqual([...longer].sort());
      // The filter bar shows what the view applied.
      expect(await page.inputValue('#filter-date')).toBe('-30d');
      expect(await page.inputValue('#filter-duration')).toBe('gt');
      expect(await page.textContent('.replay-saved-views-message')).toBe('Applied “Long sessions”.');

      // Save the current filters, console errors added, as a new view.
      await page.check('#filter-errors');
      await page.click('.replay-filters button[type=submit]');
      const withErrors = recordings.filter((r) => longer.includes(r.id) && r.console_error_count > 0);
      await until(
        page,
        `document.querySelector('.replay-list caption')?.textContent.endsWith(' of ${withErrors.length}')`,
      );
      await page.fill('#saved-view-name', 'Long sessions with errors');
      await page.click('.replay-save-view');
      await until(
        page,
        `document.querySelector('.replay-saved-views-message')?.textContent.startsWith('Saved')`,
      );
      const saved = (
        await t.http
          .get(`/api/projects/${projectId}/session_recording_playlists?search=with%20errors`)
          .set(owner.auth)
          .expect(200)
      ).body as { results: { short_id: string; name: string; filters: unknown }[] };
      expect(saved.results).toHaveLength(1);
      expect(saved.results[0]).toMatchObject({
        name: 'Long sessions with errors',
        filters: {
          date_from: '-30d',
          having_predicates: predicates,
          console_log_filters: [{ type: 'log_entry', key: 'level', operator: 'exact', value: ['error'] }],
        },
      });
      expect(await page.inputValue('#saved-view')).toBe(saved.results[0].short_id);

      // Play the first listed recording and pin it to the first view.
      await page.selectOption('#saved-view', view.short_id);
      await until(
        page,
        `document.querySelector('.replay-list caption')?.textContent === 'Recordings 1–${longer.length} of ${longer.length}'`,
      );
      const played = (await listedIds(page))[0];
      await page.locator(`tr[data-recording="${played}"] .replay-play`).click();
      await until(page, `document.querySelector('#pin-view option[value="${view.short_id}"]')`);
      // The inspector beside the player lists the demo recording's page views and console messages.
      await until(page, `document.querySelectorAll('.inspector-line[data-kind="page"]').length > 0`);
      await until(page, `document.querySelectorAll('.inspector-line[data-kind="console"]').length > 0`);
      await page.selectOption('#pin-view', view.short_id);
      await page.click('.replay-pin');
      await until(
        page,
        `document.querySelector('.replay-pin-state')?.textContent === 'Pinned to “Long sessions”.'`,
      );
      const pinned = await t.http
        .get(`/api/projects/${projectId}/session_recording_playlists/${view.short_id}/recordings`)
        .set(owner.auth)
        .expect(200);
      expect((pinned.body as { results: { id: string }[] }).results.map((r) => r.id)).toEqual([played]);
      // A view saved while the recording is open is offered to pin it to at once. Beside the player the
      // filters and views give way to the list, until "Show filters" shows them.
      expect(await page.locator('#saved-view-name').isVisible()).toBe(false);
      await page.click('.replay-filters-toggle');
      expect(await page.getAttribute('.replay-filters-toggle', 'aria-expanded')).toBe('true');
      await page.fill('#saved-view-name', 'Saved while playing');
      await page.click('.replay-save-view');
      await until(
        page,
        `[...document.querySelectorAll('#pin-view option')].some((o) => o.textContent === 'Saved while playing')`,
      );
      expect(problems).toEqual([]);
      await page.close();
    }, 120_000);
  });
}
