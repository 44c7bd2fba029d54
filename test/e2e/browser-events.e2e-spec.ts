/**
 * posthog-js on its defaults (`posthog.init(token, {api_host})`, nothing switched off) in headless Chromium, on
 * a two-page site served from another origin: the page views, autocapture clicks (with their element text), a
 * custom event and the recording must all be stored with the session's id, and the browser must see no failed
 * request to the service.
 *
 * Needs a Chromium (the Debian package `chromium`, or `CHROMIUM_PATH`); without one the test is skipped and
 * its name says why.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import {
  eventually,
  findChromium,
  type HeadlessChromium,
  launchChromium,
  posthogDefaults,
  sitePage,
  startSite,
  type TestSite,
} from '../support/browser.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

const chromiumFound = findChromium();

/** The two-page site, initialising posthog-js on its defaults. */
function shop(token: () => string, apiHost: () => string) {
  return startSite((path) => {
    const init = posthogDefaults(token(), apiHost());
    if (path === '/')
      return sitePage(
        'Shop',
        '<h1>Shop</h1><button id="buy" type="button">Buy now</button><a id="next" href="/cart">Cart</a>',
        init,
      );
    if (path === '/cart')
      return sitePage('Cart', '<h1>Cart</h1><button id="pay" type="button">Pay</button>', init);
    return null;
  });
}

interface StoredEvent {
  event: string;
  session_id: string | null;
  elements_chain: string;
  properties: Record<string, unknown>;
}

if ('reason' in chromiumFound) {
  describe('analytics from a real browser', () => {
    it.skip(`posthog-js on its defaults in Chromium — skipped: ${chromiumFound.reason}`, () => {});
  });
} else {
  const chromiumPath = chromiumFound.path;

  describe('analytics from a real browser (posthog-js on its defaults in headless Chromium)', () => {
    let t: TestApp;
    let service: string;
    let site: TestSite;
    let browser: HeadlessChromium;
    let owner: TestUser;
    let project: { id: number; api_token: string };
    let page: Page;
    const answered: string[] = [];
    const failed: string[] = [];

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
      site = await shop(
        () => project.api_token,
        () => service,
      );
      browser = await launchChromium(chromiumPath);
      page = await browser.context.newPage();
      page.on('response', (response) => {
        const url = new URL(response.url());
        if (url.origin === service)
          answered.push(`${response.request().method()} ${url.pathname} ${response.status()}`);
      });
      page.on('requestfailed', (request) => {
        const url = new URL(request.url());
        // A request the page itself abandons when it navigates away is not an answer of the service.
        if (url.origin === service && request.failure()?.errorText !== 'net::ERR_ABORTED') {
          failed.push(`${request.method()} ${url.pathname}: ${request.failure()?.errorText}`);
        }
      });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await site?.close();
      await t?.close();
    }, 60_000);

    it('stores page views, autocapture clicks with their text, a custom event and the recording, with no failed request', async () => {
      await page.goto(`${site.url}/`);
      await page.waitForFunction('window.posthog && window.posthog.sessionRecordingStarted()', undefined, {
        timeout: 30_000,
      });
      const sessionId = await page.evaluate<string>('posthog.get_session_id()');
      await page.click('#buy');
      await page.evaluate(`posthog.capture('purchase', { amount: 3 })`);
      await page.click('#next');
      await page.waitForURL(`${site.url}/cart`);
      await page.waitForFunction('window.posthog && window.posthog.__loaded', undefined, { timeout: 30_000 });
      await page.click('#pay');
      // Hiding the page makes the SDK send what it holds at once.
      await page.evaluate(`
        Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      `);

      const events = await eventually<StoredEvent[]>(async () => {
        const rows = (await t.dataSource.query(
          `SELECT event, session_id, elements_chain, properties FROM events WHERE team_id = $1 ORDER BY "timestamp"`,
          [project.id],
        )) as StoredEvent[];
        const names = rows.map((r) => r.event);
        const pageviews = names.filter((n) => n === '$pageview').length;
        const clicks = rows.filter((r) => r.event === '$autocapture' && /Pay/.test(r.elements_chain)).length;
        if (pageviews < 2 || !names.includes('purchase') || clicks < 1) {
          return `events so far: ${names.join(', ')}; the page's requests to the service: ${answered.join(', ')}`;
        }
        return rows;
      }, 60_000);

      const pageviews = events.filter((e) => e.event === '$pageview');
      expect(pageviews.map((e) => e.properties.$current_url)).toEqual(
        expect.arrayContaining([`${site.url}/`, `${site.url}/cart`]),
      );
      const buy = events.find(
        (e) => e.event === '$autocapture' && e.elements_chain.includes('text="Buy now"'),
      );
      expect(buy).toBeDefined();
      expect(buy?.elements_chain).toMatch(/^button/);
      const purchase = events.find((e) => e.event === 'purchase');
      expect(purchase?.properties.amount).toBe(3);
      // The session continues across the page load: every event of it carries its id.
      for (const event of [...pageviews, buy, purchase]) expect(event?.session_id).toBe(sessionId);
      const recording = await eventually<{ id: string }>(async () => {
        const res = await t.http
          .get(`/api/projects/${project.id}/session_recordings/${sessionId}`)
          .set(owner.auth);
        return res.status === 200 ? (res.body as { id: string }) : `no recording yet (${res.status})`;
      }, 60_000);
      expect(recording.id).toBe(sessionId);
      // The read API finds them by the session too.
      const listed = await t.http
        .get(`/api/projects/${project.id}/events/`)
        .query({ session_id: sessionId, event: 'purchase' })
        .set(owner.auth)
        .expect(200);
      expect(listed.body.count).toBe(1);

      expect(answered.filter((a) => !/ [23]\d\d$/.test(a))).toEqual([]);
      expect(failed).toEqual([]);
      expect(answered.some((a) => /^POST \/(e|i\/v0\/e)\/ 200$/.test(a))).toBe(true);
    }, 180_000);
  });
}
