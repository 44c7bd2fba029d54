import { describe, expect, it } from '@jest/globals';
import { runInNewContext } from 'node:vm';
import { remoteConfigFor, remoteConfigScript } from './remote-config.js';

describe('remoteConfigFor', () => {
  it('turns recording on with the capture endpoint, or off as false', () => {
    const on = remoteConfigFor({ apiToken: 'phc_a', sessionRecordingOptIn: true });
    expect(on.sessionRecording).toMatchObject({
      endpoint: '/s/',
      consoleLogRecordingEnabled: true,
      scriptConfig: null,
    });
    expect(remoteConfigFor({ apiToken: 'phc_a', sessionRecordingOptIn: false }).sessionRecording).toBe(false);
  });

  it("serves the project's capture settings, on PostHog's defaults when absent", () => {
    const defaults = remoteConfigFor({ apiToken: 'phc_a', sessionRecordingOptIn: true });
    expect(defaults).toMatchObject({
      autocapture_opt_out: false,
      autocaptureExceptions: false,
      capturePerformance: { network_timing: true, web_vitals: false },
      heatmaps: false,
    });
    const set = remoteConfigFor({
      apiToken: 'phc_a',
      sessionRecordingOptIn: true,
      autocaptureOptOut: true,
      autocaptureExceptionsOptIn: true,
      captureConsoleLogOptIn: false,
      capturePerformanceOptIn: false,
      heatmapsOptIn: true,
    });
    expect(set).toMatchObject({
      autocapture_opt_out: true,
      autocaptureExceptions: true,
      errorTracking: { autocaptureExceptions: true },
      capturePerformance: false,
      heatmaps: true,
      sessionRecording: { consoleLogRecordingEnabled: false },
    });
  });

  it('offers gzip and has no feature flags', () => {
    const config = remoteConfigFor({ apiToken: 'phc_a', sessionRecordingOptIn: true });
    expect(config.supportedCompression).toEqual(['gzip', 'gzip-js']);
    expect(config.hasFeatureFlags).toBe(false);
    expect(config.token).toBe('phc_a');
  });
});

describe('remoteConfigScript', () => {
  const run = (script: string) => {
    const window: Record<string, unknown> = {};
    runInNewContext(script, { window });
    return window._POSTHOG_REMOTE_CONFIG as Record<string, { config: unknown; siteApps: unknown }>;
  };

  it('registers {config, siteApps: []} under the token', () => {
    const config = remoteConfigFor({ apiToken: 'phc_abc', sessionRecordingOptIn: true });
    expect(run(remoteConfigScript(config))).toEqual({ phc_abc: { config, siteApps: [] } });
  });

  it('cannot be broken out of: script end tags and line separators are escaped', () => {
    const token = 'phc_</script><script>alert(1)</script>\u2028x';
    const script = remoteConfigScript(remoteConfigFor({ apiToken: token, sessionRecordingOptIn: false }));
    expect(script).not.toContain('</script>');
    expect(script).not.toContain('\u2028');
    expect(Object.keys(run(script))).toEqual([token]);
  });
});
