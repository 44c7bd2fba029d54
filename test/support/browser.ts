import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromium, type BrowserContext, type Frame, type Page } from 'playwright-core';

/** Where a Chromium is looked for: `CHROMIUM_PATH`, then the Debian package's binary. */
const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The path of an executable Chromium, or the reason there is none (shown as the skipped test's name). */
export function findChromium(): { path: string } | { reason: string } {
  for (const path of CANDIDATES) {
    if (!path) continue;
    try {
      accessSync(path, constants.X_OK);
      return { path };
    } catch {
      // not this one
    }
  }
  return {
    reason: `no Chromium found (tried ${CANDIDATES.filter(Boolean).join(', ')}; install the Debian package "chromium" or set CHROMIUM_PATH)`,
  };
}

export interface HeadlessChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile, quiet (no background networking, sync, component updates, QUIC)
 * so that the only traffic is the page's. As root Chromium needs `--no-sandbox`.
 */
export async function launchChromium(executablePath: string): Promise<HeadlessChromium> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  const args = [
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args,
    timeout: 60_000,
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The `posthog.init(…)` call of the test sites: recording on, everything else the SDK would send off. An
 * automated browser reports navigator.webdriver (and "HeadlessChrome"), which the SDK treats as a bot and drops
 * every event of (posthog-js PostHog.capture, isLikelyBot); a real visitor's is not, hence the user agent filter.
 */
export function posthogInit(token: string, apiHost: string): string {
  const options = {
    api_host: apiHost,
    autocapture: false,
    capture_pageview: false,
    capture_pageleave: false,
    capture_dead_clicks: false,
    capture_heatmaps: false,
    capture_performance: false,
    disable_surveys: true,
    advanced_disable_feature_flags: true,
    person_profiles: 'identified_only',
    opt_out_useragent_filter: true,
  };
  return `posthog.init(${JSON.stringify(token)}, ${JSON.stringify(options)});`;
}

/**
 * `posthog.init(…)` on the SDK's defaults, nothing switched off. The one option besides `api_host` is
 * `opt_out_useragent_filter`: an automated browser reports navigator.webdriver, which the SDK otherwise treats as
 * a bot and drops every event of; a real visitor's browser does not.
 */
export function posthogDefaults(token: string, apiHost: string): string {
  const options = { api_host: apiHost, opt_out_useragent_filter: true };
  return `posthog.init(${JSON.stringify(token)}, ${JSON.stringify(options)});`;
}

/** A page of a test site: `body`, then posthog-js (served by `startSite`) and the `init` call. */
export function sitePage(title: string, body: string, init: string): string {
  return `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>${title}</title></head>
  <body>
    ${body}
    <script src="/vendor/posthog-array.js"></script>
    <script>${init}</script>
  </body>
</html>`;
}

/** What a test site answers for a path: an HTML page, another type of body, or `null` for 404. */
export type SiteAnswer = string | { type: string; body: string | Buffer } | null;

export interface TestSite {
  server: Server;
  /** The site's origin, `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves a test site on loopback, on a port of its own (another origin than the service): posthog-js's browser
 * bundle, straight from the installed package, at `/vendor/posthog-array.js`, and every other path as `answer`
 * says (the path without its query; the request for the rest).
 */
export async function startSite(
  answer: (path: string, req: IncomingMessage) => SiteAnswer,
): Promise<TestSite> {
  const require = createRequire(import.meta.url);
  const bundle = readFileSync(join(dirname(require.resolve('posthog-js/package.json')), 'dist', 'array.js'));
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/vendor/posthog-array.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(bundle);
      return;
    }
    const answered = answer(path, req);
    if (answered === null) res.writeHead(404).end();
    else if (typeof answered === 'string')
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(answered);
    else res.writeHead(200, { 'Content-Type': answered.type }).end(answered.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Calls `fn` every `intervalMs` until it returns something other than a string (returned); a string says what is
 * still missing, and the last one is in the error when `timeoutMs` has passed.
 */
export async function eventually<T>(
  fn: () => Promise<T | string>,
  timeoutMs: number,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const result = await fn();
    if (typeof result !== 'string') return result;
    last = result;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms: ${last}`);
}

/**
 * Waits until `expression`, evaluated in the page (or frame) every 100 ms, is truthy. On timeout the error names
 * the expression and, when `shown` is given, what it reads from the page.
 */
export async function until(
  target: Page | Frame,
  expression: string,
  timeoutMs = 20_000,
  shown?: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await target.evaluate<unknown>(expression).catch(() => false)) return;
    if (Date.now() > deadline) {
      const page = shown
        ? ` (page: ${await target.evaluate<string>(shown).catch((e: Error) => e.message)})`
        : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression.trim()}${page}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
