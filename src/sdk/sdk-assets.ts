/**
 * The browser SDK's own scripts, served from the installed `posthog-js` package (never a copy in this
 * repository), so the SDK version the service speaks and the recorder it hands out are the same.
 *
 * Which files the SDK asks for (posthog-js `lib/src/entrypoints/external-scripts-loader.js`,
 * `loadExternalDependency`): `<api_host>/static/<kind>.js?v=<sdk version>`, or
 * `<api_host>/static/<sdk version>/<kind>.js` with `strict_script_versioning`. The recorder's kind is
 * `lazy-recorder` (`SessionRecording._scriptName` in `extensions/replay/session-recording.js`, unless the
 * remote config's `scriptConfig.script` names another: `posthog-recorder`); SDK versions before the lazy
 * recorder load `recorder` or `recorder-v2`. `array.js` / `array.full.js` are the SDK itself, for sites that
 * load it with a script tag from this service.
 *
 * `posthog.version` is the SDK's `package.json` version baked into its bundle (`Config.LIB_VERSION`), so the
 * versioned path of any release names that release: the installed package's scripts are served for every
 * version, as the lazily loaded extensions talk to the SDK only through `window.__PosthogExtensions__`.
 */
import { readFileSync, type Stats, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The only files `/static/…` serves. Anything else is 404. */
export const SDK_SCRIPTS = [
  'array.js',
  'array.full.js',
  'lazy-recorder.js',
  'posthog-recorder.js',
  'recorder.js',
  'recorder-v2.js',
  // Extensions the SDK loads lazily on its defaults (their events go to the analytics capture): surveys (loaded
  // even when the remote config turns surveys off, to set itself up as off), exception and dead-click
  // autocapture, web vitals, tracing headers.
  'surveys.js',
  'exception-autocapture.js',
  'dead-clicks-autocapture.js',
  'web-vitals.js',
  'tracing-headers.js',
] as const;

/**
 * A version as posthog-js releases are numbered: `major.minor.patch`, optionally with a semver pre-release
 * (`1.450.0-beta.1`). Bounded (at most 6 digits a number, 64 characters in all), with no `/`, `\\`, `%` or
 * `.` runs, so a path segment that passes can only ever be a version string.
 */
const SDK_VERSION =
  /^(?:0|[1-9]\d{0,5})\.(?:0|[1-9]\d{0,5})\.(?:0|[1-9]\d{0,5})(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** True for a string a posthog-js release could report as its version (see `SDK_VERSION`). */
export function isSdkVersion(version: string): boolean {
  return version.length <= 64 && SDK_VERSION.test(version);
}

const SERVED = new Set<string>([...SDK_SCRIPTS, ...SDK_SCRIPTS.map((name) => `${name}.map`)]);

export interface SdkAsset {
  path: string;
  contentType: string;
  /**
   * A validator from the file's size and modification time (the form Express's `send` uses), set by the
   * controller itself because the app's ETag generation is off for API answers.
   */
  etag: string;
}

export class SdkAssets {
  readonly version: string;
  readonly distDir: string;

  constructor() {
    const require = createRequire(import.meta.url);
    const packageJson = require.resolve('posthog-js/package.json');
    this.version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
    this.distDir = join(dirname(packageJson), 'dist');
  }

  /**
   * The file for a requested name, or null when it is not one of the served files (or missing from the
   * installed package). The name is compared with the list, never joined into a path as given, so `..`,
   * slashes or encoded separators cannot reach another file.
   */
  find(name: string): SdkAsset | null {
    if (!SERVED.has(name)) return null;
    const path = join(this.distDir, name);
    let stat: Stats;
    try {
      stat = statSync(path);
    } catch {
      return null;
    }
    return {
      path,
      etag: `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`,
      contentType: name.endsWith('.map')
        ? 'application/json; charset=utf-8'
        : 'text/javascript; charset=utf-8',
    };
  }
}
