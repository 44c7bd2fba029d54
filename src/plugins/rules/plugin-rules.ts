/**
 * Validation rules of pipeline plugin records that go beyond field types: the URL per plugin type, the shapes
 * of the JSON fields, and source file maps. Pure functions returning the first violation (or null), so the
 * service turns it into a 400 with `attr` naming the nested field; unit-tested beside this file.
 */
import { isPlainObject, type Violation, violation } from '../../common/validation/violation.js';
import type { Capabilities } from '../categories/plugin-category.js';

export const PLUGIN_TYPES = ['local', 'custom', 'repository', 'source', 'inline'] as const;
export type PluginType = (typeof PLUGIN_TYPES)[number];

export const MAX_URL_LENGTH = 800;
/** Most files one source record may hold, largest file name and largest file (UTF-8 bytes). */
export const MAX_SOURCE_FILES = 50;
export const MAX_SOURCE_FILENAME_LENGTH = 200;
export const MAX_SOURCE_FILE_BYTES = 256 * 1024;
/** Largest list in `capabilities` and longest name in it. */
const MAX_CAPABILITY_ITEMS = 200;
const MAX_CAPABILITY_NAME = 200;

export type JsonObject = Record<string, unknown>;

/**
 * The body of `update_source`: a JSON object mapping file names to text or null (null deletes). Its object shape
 * is checked by SourceChangesPipe; names and values by `sourceChangesViolation`, which also needs the current
 * files.
 */
export type SourceChanges = Readonly<Record<string, unknown>>;

/** `inline://<name>`: plugins built into the service. */
const INLINE_URL = /^inline:\/\/[a-z0-9][a-z0-9._-]{0,199}$/;
/** `file:<path>`: a plugin on the service's file system (local development). */
const FILE_URL = /^file:[^\s]+$/;

/**
 * The URL rules (docs/decisions.md §9 and stricter than PostHog): required except for `source` records; `local` records
 * take `file:<path>`, `inline` ones `inline://<name>`, the others an http(s) URL with a host and without
 * credentials, query or fragment (so a URL never carries a secret, and the same plugin has one spelling).
 */
export function urlViolation(pluginType: PluginType, url: string | null | undefined): Violation | null {
  if (url === null || url === undefined || url === '') {
    return pluginType === 'source'
      ? null
      : violation(`A url is required for plugins of type '${pluginType}'.`, 'url', 'required');
  }
  if (url.length > MAX_URL_LENGTH) {
    return violation(`Ensure this field has no more than ${MAX_URL_LENGTH} characters.`, 'url', 'max_length');
  }
  if (/\s/.test(url)) return violation('Enter a valid URL (no white space).', 'url');
  if (pluginType === 'local') {
    return FILE_URL.test(url) ? null : violation("Plugins of type 'local' take a 'file:<path>' url.", 'url');
  }
  if (pluginType === 'inline') {
    return INLINE_URL.test(url)
      ? null
      : violation("Plugins of type 'inline' take an 'inline://<name>' url.", 'url');
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return violation('Enter a valid http:// or https:// URL.', 'url');
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !parsed.hostname) {
    return violation('Enter a valid http:// or https:// URL.', 'url');
  }
  if (parsed.username || parsed.password) {
    return violation('The url must not carry credentials.', 'url');
  }
  if (parsed.search || parsed.hash || url.includes('?') || url.includes('#')) {
    return violation('The url must not carry a query or a fragment.', 'url');
  }
  // The limit is on the stored spelling: percent-encoding and IDNA can make it several times longer.
  const stored = normaliseUrl(url).length;
  if (stored > MAX_URL_LENGTH) {
    return violation(
      `Ensure this field has no more than ${MAX_URL_LENGTH} characters once normalised ` +
        `(percent-encoded: ${stored}).`,
      'url',
      'max_length',
    );
  }
  return null;
}

/**
 * The stored spelling of a valid url: http(s) URLs with a lower-case scheme and host and without trailing
 * slashes, so `https://GitHub.com/a/b/` and `https://github.com/a/b` are the same plugin; others unchanged.
 */
export function normaliseUrl(url: string): string {
  if (!/^https?:/i.test(url)) return url;
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
}

function stringListViolation(value: unknown, attr: string): Violation | null {
  if (!Array.isArray(value)) return violation('Must be a list of strings.', attr);
  if (value.length > MAX_CAPABILITY_ITEMS) {
    return violation(`Ensure this list has no more than ${MAX_CAPABILITY_ITEMS} items.`, attr);
  }
  for (const item of value) {
    if (typeof item !== 'string' || item.trim() === '') {
      return violation('Must be a list of non-empty strings.', attr);
    }
    if (item.length > MAX_CAPABILITY_NAME) {
      return violation(`Names must have no more than ${MAX_CAPABILITY_NAME} characters.`, attr);
    }
  }
  if (new Set(value).size !== value.length) return violation('The list must not repeat a name.', attr);
  return null;
}

const CAPABILITY_KEYS = ['methods', 'scheduled_tasks', 'jobs'];

/**
 * `capabilities`: an object with optional `methods` (names of the plugin's methods, e.g. `processEvent`,
 * `onEvent`, `composeWebhook`, `setupPlugin`), `scheduled_tasks` (e.g. `runEveryMinute`) and `jobs` (job names),
 * each a list of distinct non-empty strings. Other keys are refused.
 */
export function capabilitiesViolation(value: unknown): Violation | null {
  if (!isPlainObject(value)) return violation('Must be an object.', 'capabilities');
  for (const key of Object.keys(value)) {
    if (!CAPABILITY_KEYS.includes(key)) {
      return violation(
        `Unknown capability '${key}': expected methods, scheduled_tasks or jobs.`,
        `capabilities__${key}`,
        'unknown_field',
      );
    }
    const problem = stringListViolation(value[key], `capabilities__${key}`);
    if (problem) return problem;
  }
  return null;
}

/** The capabilities in their stored form (only the keys sent, lists copied). */
export function toCapabilities(value: JsonObject): Capabilities {
  const out: Capabilities = {};
  for (const key of CAPABILITY_KEYS as (keyof Capabilities)[]) {
    if (value[key] !== undefined) out[key] = [...(value[key] as string[])];
  }
  return out;
}

/**
 * `config_schema`: the plugin's settings form, as in a plugin's `plugin.json` `config`: a list of field
 * objects (`{key, name, type, default, required, secret, …}`; `key` a string and `secret` a boolean when
 * present), or an object (older plugins).
 */
export function configSchemaViolation(value: unknown, attr = 'config_schema'): Violation | null {
  if (isPlainObject(value)) return null;
  if (!Array.isArray(value)) return violation('Must be a list of field objects, or an object.', attr);
  for (const [i, field] of value.entries()) {
    if (!isPlainObject(field)) return violation('Each field must be an object.', `${attr}__${i}`);
    if (field.key !== undefined && typeof field.key !== 'string') {
      return violation('Must be a string.', `${attr}__${i}__key`);
    }
    if (field.secret !== undefined && typeof field.secret !== 'boolean') {
      return violation('Must be a boolean.', `${attr}__${i}__secret`);
    }
  }
  return null;
}

/** `metrics`: an object (free-form values). */
export function metricsViolation(value: unknown): Violation | null {
  return isPlainObject(value) ? null : violation('Must be an object.', 'metrics');
}

/** `public_jobs`: an object mapping job names to objects describing them (e.g. `{"payload": {...}}`). */
export function publicJobsViolation(value: unknown): Violation | null {
  if (!isPlainObject(value)) return violation('Must be an object.', 'public_jobs');
  for (const [name, job] of Object.entries(value)) {
    if (!isPlainObject(job)) return violation('Each job must be an object.', `public_jobs__${name}`);
  }
  return null;
}

/** A file name of a source record: path segments of letters, digits, `_`, `-` and `.`, none starting with `.`. */
const SOURCE_FILENAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;

/**
 * An `update_source` body: `{filename: text | null}` (null deletes the file). `current` is the record's file
 * names, to check the file count after the change.
 */
export function sourceChangesViolation(body: unknown, current: readonly string[]): Violation | null {
  if (!isPlainObject(body)) return violation('Expected an object mapping file names to text or null.', null);
  const names = new Set(current);
  for (const [filename, text] of Object.entries(body)) {
    if (filename.length > MAX_SOURCE_FILENAME_LENGTH) {
      return violation(
        `File names must have no more than ${MAX_SOURCE_FILENAME_LENGTH} characters.`,
        filename.slice(0, MAX_SOURCE_FILENAME_LENGTH),
        'max_length',
      );
    }
    if (!SOURCE_FILENAME.test(filename)) {
      return violation(
        'Invalid file name: use letters, digits, "_", "-" and "." in "/"-separated segments not starting with ".".',
        filename,
      );
    }
    if (text === null) {
      names.delete(filename);
      continue;
    }
    if (typeof text !== 'string') return violation('Must be a string (the file text) or null.', filename);
    if (Buffer.byteLength(text, 'utf8') > MAX_SOURCE_FILE_BYTES) {
      return violation(`A file may hold at most ${MAX_SOURCE_FILE_BYTES} bytes.`, filename, 'max_length');
    }
    names.add(filename);
  }
  if (names.size > MAX_SOURCE_FILES) {
    return violation(`A plugin may have at most ${MAX_SOURCE_FILES} source files.`, null);
  }
  return null;
}

/** What a valid `plugin.json` contributes to its record. */
export interface PluginJson {
  name?: string;
  config?: unknown;
}

/** Parses a `plugin.json` text: a JSON object whose `name` (if any) is a non-empty string and `config` a schema. */
export function parsePluginJson(text: string): { value: PluginJson } | { violation: Violation } {
  const attr = 'plugin.json';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { violation: violation('plugin.json is not valid JSON.', attr) };
  }
  if (!isPlainObject(parsed)) return { violation: violation('plugin.json must hold a JSON object.', attr) };
  if (parsed.name !== undefined) {
    if (typeof parsed.name !== 'string' || parsed.name.trim() === '' || parsed.name.trim().length > 200) {
      return { violation: violation('plugin.json "name" must be a string of 1 to 200 characters.', attr) };
    }
  }
  if (parsed.config !== undefined) {
    const problem = configSchemaViolation(parsed.config, attr);
    if (problem) return { violation: { ...problem, detail: `plugin.json "config": ${problem.detail}` } };
  }
  return {
    value: {
      name: typeof parsed.name === 'string' ? parsed.name.trim() : undefined,
      config: parsed.config,
    },
  };
}

/** Keys of the fields marked `secret: true` in a list-form config schema. */
export function secretKeys(configSchema: unknown): Set<string> {
  const keys = new Set<string>();
  if (!Array.isArray(configSchema)) return keys;
  for (const field of configSchema) {
    if (isPlainObject(field) && field.secret === true && typeof field.key === 'string') keys.add(field.key);
  }
  return keys;
}
