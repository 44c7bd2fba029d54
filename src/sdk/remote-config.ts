/**
 * The remote configuration the browser SDK (posthog-js) fetches before it starts anything: as JSON from
 * `GET /array/:token/config`, as a script from `GET /array/:token/config.js`, and embedded in the answers of
 * `POST /flags` and `POST /decide` (older SDK versions read it there).
 *
 * Fields, as posthog-js reads them (package `@posthog/browser-common`, `dist/types/remote-config.d.ts`,
 * interface `RemoteConfig`; `posthog-js/lib/src/remote-config.js`, `RemoteConfigLoader`):
 * - `supportedCompression`: `PostHog._onRemoteConfig` (posthog-core) picks gzip-js when it is listed, so
 *   recording batches arrive gzip-compressed with `?compression=gzip-js`.
 * - `sessionRecording`: `false`, or an object whose `endpoint` is where `$snapshot` batches go
 *   (`SessionRecording.onRemoteConfig` / `_persistRemoteConfig` in `extensions/replay/session-recording.js`;
 *   the recorder only starts when the object is present). `scriptConfig.script` would rename the lazily loaded
 *   recorder; null keeps the SDK's default `lazy-recorder`.
 * - `hasFeatureFlags: false`: `RemoteConfigLoader._onRemoteConfig` then does not call `/flags` at all; this
 *   service has no feature flags.
 * - The project's capture settings, PostHog's project fields with PostHog's defaults: autocapture
 *   (`autocapture_opt_out`), exception autocapture, console logs in recordings, network timings
 *   (`capturePerformance`), heatmaps. Their events go to the analytics endpoints (src/events), which store them.
 * - What the service has no part for stays off: dead clicks, logs, surveys, product tours, conversations.
 */
import type { ProjectEntity } from '../projects/project.entity.js';

/** Path the SDK posts recording batches to (relative to its `api_host`). */
export const RECORDING_ENDPOINT = '/s/';

export interface SessionRecordingConfig {
  endpoint: string;
  consoleLogRecordingEnabled: boolean;
  recorderVersion: 'v2';
  sampleRate: null;
  minimumDurationMilliseconds: null;
  linkedFlag: null;
  networkPayloadCapture: null;
  masking: null;
  urlTriggers: [];
  urlBlocklist: [];
  eventTriggers: [];
  triggerMatchType: null;
  scriptConfig: null;
  recordCanvas: false;
  canvasFps: null;
  canvasQuality: null;
}

export interface RemoteConfig {
  token: string;
  supportedCompression: ['gzip', 'gzip-js'];
  hasFeatureFlags: false;
  autocapture_opt_out: boolean;
  captureDeadClicks: false;
  capturePerformance: { network_timing: true; web_vitals: false } | false;
  autocaptureExceptions: boolean;
  errorTracking: { autocaptureExceptions: boolean; suppressionRules: [] };
  logs: { captureConsoleLogs: false };
  elementsChainAsString: true;
  sessionRecording: SessionRecordingConfig | false;
  heatmaps: boolean;
  surveys: false;
  productTours: false;
  conversations: false;
  defaultIdentifiedOnly: true;
  siteApps: [];
}

/**
 * The capture settings of a project the remote config serves; absent ones take PostHog's defaults (console logs
 * and network timings on, the rest off).
 */
export type CaptureSettings = Partial<
  Pick<
    ProjectEntity,
    | 'autocaptureOptOut'
    | 'autocaptureExceptionsOptIn'
    | 'captureConsoleLogOptIn'
    | 'capturePerformanceOptIn'
    | 'heatmapsOptIn'
  >
>;

/** The project's remote config: recording per `session_recording_opt_in`, capture per the project's settings. */
export function remoteConfigFor(
  project: Pick<ProjectEntity, 'apiToken' | 'sessionRecordingOptIn'> & CaptureSettings,
): RemoteConfig {
  const exceptions = project.autocaptureExceptionsOptIn === true;
  return {
    token: project.apiToken,
    supportedCompression: ['gzip', 'gzip-js'],
    hasFeatureFlags: false,
    autocapture_opt_out: project.autocaptureOptOut === true,
    captureDeadClicks: false,
    capturePerformance:
      project.capturePerformanceOptIn !== false ? { network_timing: true, web_vitals: false } : false,
    autocaptureExceptions: exceptions,
    errorTracking: { autocaptureExceptions: exceptions, suppressionRules: [] },
    logs: { captureConsoleLogs: false },
    elementsChainAsString: true,
    sessionRecording: project.sessionRecordingOptIn
      ? sessionRecordingConfig(project.captureConsoleLogOptIn !== false)
      : false,
    heatmaps: project.heatmapsOptIn === true,
    surveys: false,
    productTours: false,
    conversations: false,
    defaultIdentifiedOnly: true,
    siteApps: [],
  };
}

function sessionRecordingConfig(consoleLogs: boolean): SessionRecordingConfig {
  return {
    endpoint: RECORDING_ENDPOINT,
    // Console output in recordings: the project's `capture_console_log_opt_in` (PostHog's default: on).
    consoleLogRecordingEnabled: consoleLogs,
    recorderVersion: 'v2',
    // No sampling, no minimum duration, no linked flag, no triggers: every session is recorded.
    sampleRate: null,
    minimumDurationMilliseconds: null,
    linkedFlag: null,
    networkPayloadCapture: null,
    masking: null,
    urlTriggers: [],
    urlBlocklist: [],
    eventTriggers: [],
    triggerMatchType: null,
    scriptConfig: null,
    recordCanvas: false,
    canvasFps: null,
    canvasQuality: null,
  };
}

/**
 * The `config.js` script: registers the config under `window._POSTHOG_REMOTE_CONFIG[token]` as
 * `{config, siteApps}`, the shape `RemoteConfigLoader.remoteConfig` reads (`…[token].config`). The JSON is
 * made safe to embed in a script (no `</script>`, no line separators).
 */
export function remoteConfigScript(config: RemoteConfig): string {
  const token = scriptJson(config.token);
  const entry = scriptJson({ config, siteApps: [] });
  return (
    '(function () {\n' +
    '  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};\n' +
    `  window._POSTHOG_REMOTE_CONFIG[${token}] = ${entry};\n` +
    '})();\n'
  );
}

function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
