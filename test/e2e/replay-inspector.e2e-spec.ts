/**
 * The player's inspector in a real browser, on the share page: a recording whose events hold two page views,
 * console messages and a failed network request lists them in time order, filters them, marks page views and
 * errors on the seek bar, moves the player to a line that is clicked, and highlights the line of the current
 * time as it plays. Needs a Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`); without one the test is
 * skipped and its name says why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { findChromium, type HeadlessChromium, launchChromium, until } from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, type Rrweb, snapshotEvent } from '../support/recordings.js';

const chromiumFound = findChromium();
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-artifacts', 'replay');

/** A full snapshot of a page showing `text`. */
const fullSnapshot = (timestamp: number, text: string): Rrweb => ({
  type: 2,
  timestamp,
  data: {
    node: {
      type: 0,
      id: 1,
      childNodes: [
        { type: 1, id: 2, name: 'html', publicId: '', systemId: '' },
        {
          type: 2,
          id: 3,
          tagName: 'html',
          attributes: {},
          childNodes: [
            {
              type: 2,
              id: 4,
              tagName: 'body',
              attributes: {},
              childNodes: [{ type: 3, id: 5, textContent: text }],
            },
          ],
        },
      ],
    },
    initialOffset: { left: 0, top: 0 },
  },
});
const meta = (timestamp: number, href: string): Rrweb => ({
  type: 4,
  timestamp,
  data: { href, width: 1024, height: 700 },
});
const log = (timestamp: number, level: string, message: string): Rrweb => ({
  type: 6,
  timestamp,
  data: { plugin: 'rrweb/console@1', payload: { level, payload: [JSON.stringify(message)], trace: [] } },
});
const move = (timestamp: number): Rrweb => ({
  type: 3,
  timestamp,
  data: { source: 1, positions: [{ x: 10, y: 20, id: 4, timeOffset: 0 }] },
});

const lines = (page: Page) =>
  page.evaluate<string[]>(
    `[...document.querySelectorAll('.inspector-line')].map((l) => l.querySelector('.inspector-label').textContent + ' ' + l.querySelector('.inspector-text').textContent)`,
  );

if ('reason' in chromiumFound) {
  describe('the inspector in a real browser', () => {
    it.skip(`the inspector lists, filters and seeks in Chromium — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('the inspector beside the player (headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let browser: HeadlessChromium;
    let owner: TestUser;
    let accessToken: string;

    beforeAll(async () => {
      t = await createTestApp();
      await t.app.listen(0, '127.0.0.1');
      service = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      owner = await t.factories.user();
      const org = await t.factories.organization(owner);
      const project = org.teams[0];
      const sessionId = newSessionId('inspector');
      const T0 = t.clock.now().getTime() - 60_000;
      await t.http
        .post('/s/')
        .send([
          snapshotEvent({
            token: project.api_token,
            sessionId,
            events: [
              meta(T0, 'https://shop.example/start'),
              fullSnapshot(T0 + 10, 'Start page'),
              log(T0 + 2000, 'log', 'Cart opened'),
              {
                type: 6,
                timestamp: T0 + 4000,
                data: {
                  plugin: 'rrweb/network@1',
                  payload: {
                    requests: [
                      {
                        name: 'https://shop.example/api/pay',
                        method: 'POST',
                        responseStatus: 500,
                        timestamp: T0 + 4000,
                      },
                    ],
                  },
                },
              },
              log(T0 + 6000, 'error', 'Payment failed'),
              meta(T0 + 8000, 'https://shop.example/thanks'),
              fullSnapshot(T0 + 8010, 'Thanks page'),
              move(T0 + 12_000),
            ],
          }),
        ])
        .expect(200);
      accessToken = (
        await t.http
          .patch(`/api/projects/${project.id}/session_recordings/${sessionId}/sharing`)
          .set(owner.auth)
          .send({ enabled: true })
          .expect(200)
      ).body.access_token as string;
      browser = await launchChromium(chromiumPath);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await t?.close();
    }, 60_000);

    it('lists, filters, marks, seeks and follows playback', async () => {
      const page = await browser.context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.goto(`${service}/shared/${accessToken}`);
      await until(page, `document.querySelectorAll('.inspector-line').length === 5`);
      expect(await lines(page)).toEqual([
        'page view https://shop.example/start',
        'log Cart opened',
        'POST https://shop.example/api/pay → 500',
        'error Payment failed',
        'page view https://shop.example/thanks',
      ]);
      expect(await page.textContent('.inspector-summary')).toBe('5 of 5 lines');
      expect(await page.locator('.player-marker-page').count()).toBe(2);
      expect(await page.locator('.player-marker-error').count()).toBe(2);

      // Filters: by kind, then by text.
      await page.uncheck('.inspector-kind[data-kind="console"]');
      await until(page, `document.querySelectorAll('.inspector-line').length === 3`);
      await page.check('.inspector-kind[data-kind="console"]');
      await page.fill('.inspector-search', 'PAYMENT');
      await until(page, `document.querySelectorAll('.inspector-line').length === 1`);
      expect(await lines(page)).toEqual(['error Payment failed']);
      await page.fill('.inspector-search', '');
      await until(page, `document.querySelectorAll('.inspector-line').length === 5`);

      // The page plays on load: pause it (in one step in the page, so the recording cannot end in between),
      // or playback would carry the seek below on past the line's time.
      await page.evaluate(`{
        const player = document.querySelector('.player');
        if (['loading', 'playing', 'buffering'].includes(player.dataset.state)) player.querySelector('.player-play').click();
      }`);
      await until(page, `['paused', 'ended'].includes(document.querySelector('.player').dataset.state)`);

      // A click moves the player to the line's time.
      await page.locator('.inspector-line', { hasText: 'Payment failed' }).click();
      await until(page, `Math.abs(Number(document.querySelector('.player').dataset.time) - 6000) < 50`);
      await until(
        page,
        `document.querySelector('.inspector-current')?.textContent.includes('Payment failed')`,
      );

      // Playing on, the current line follows to the second page view.
      await page.check('.inspector-follow');
      await page.click('.player-play');
      await until(
        page,
        `document.querySelector('.inspector-current')?.textContent.includes('https://shop.example/thanks')`,
        20_000,
      );
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'inspector.png') });
      expect(problems).toEqual([]);
      await page.close();
    }, 90_000);

    it('is not on the embed page', async () => {
      const page = await browser.context.newPage();
      await page.goto(`${service}/embedded/${accessToken}`);
      await until(page, `document.querySelector('.player')`);
      expect(await page.locator('.inspector').count()).toBe(0);
      await page.close();
    });
  });
}
