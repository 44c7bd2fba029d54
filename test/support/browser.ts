import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

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
