/**
 * The bounds of person properties (docs/limits.md, docs/decisions.md §10), as pure functions every writer of
 * persons calls through `PersonsService`: capture's `$set`/`$set_once`, the API's PATCH of a recording's person,
 * and any later ingestion of events.
 *
 * - what one request sets on one person: at most PERSON_SET_MAX_KEYS values (each key of an object and each
 *   element of an array, nested included) and PERSON_SET_MAX_BYTES bytes of compact JSON;
 * - a person's properties: at most PERSON_PROPERTIES_MAX_BYTES bytes of compact JSON. An update that would pass
 *   it is not applied; a person already past it is trimmed, largest properties first, the identifying ones last.
 *
 * Sizes are measured so that an oversized input costs little: counting stops past the limit, and a value's
 * JSON is only serialised once a cheap lower bound says it may fit.
 */

type Json = Record<string, unknown>;

export interface PersonSetLimits {
  /** PERSON_SET_MAX_KEYS. */
  maxKeys: number;
  /** PERSON_SET_MAX_BYTES. */
  maxBytes: number;
}

export interface PersonPropertyUpdate {
  set: Json;
  setOnce: Json;
  /**
   * Keys removed (`$unset`). Disjoint from `set` and `setOnce` when built by `foldPersonEvent`
   * (person-event-updates.ts), which keeps the order of a request's events.
   */
  unset?: readonly string[];
  /** Also mark the person identified (`is_identified`: an `$identify` or `$create_alias` linked it). */
  identify?: boolean;
}

/**
 * Properties a person is found and named by, and the first-touch and campaign properties SDKs set once:
 * trimmed only when nothing else is left to trim.
 */
export const PROTECTED_PERSON_PROPERTIES: ReadonlySet<string> = new Set([
  'email',
  'name',
  '$user_id',
  '$device_id',
  '$anon_distinct_id',
  '$browser',
  '$os',
  '$device_type',
  '$current_url',
  '$referrer',
  '$referring_domain',
  '$initial_referrer',
  '$initial_referring_domain',
  '$initial_current_url',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
  '$initial_utm_source',
  '$initial_utm_medium',
  '$initial_utm_campaign',
  '$initial_utm_content',
  '$initial_utm_term',
  'gclid',
  'fbclid',
  'msclkid',
]);

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Sets an own property, also for the key `__proto__`. */
function setOwn(target: Json, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The values of `root`'s properties as PERSON_SET_MAX_KEYS counts them (each key of an object, each element of
 * an array, nested included), counting no further than `max + 1`: an object with a million keys costs no more
 * than one with `max + 1`.
 */
export function countSetValues(root: Json, max: number): number {
  let count = 0;
  const pending: unknown[] = [root];
  while (pending.length) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        if (++count > max) return count;
        pending.push(value[i]);
      }
    } else if (isObject(value)) {
      for (const key in value) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        if (++count > max) return count;
        pending.push(value[key]);
      }
    }
  }
  return count;
}

/** A lower bound of the bytes of `value`'s compact JSON, counting no further than past `max`. */
function jsonBytesAtLeast(root: unknown, max: number): number {
  let bytes = 0;
  const pending: unknown[] = [root];
  while (pending.length && bytes <= max) {
    const value = pending.pop();
    if (typeof value === 'string') bytes += value.length + 2;
    else if (Array.isArray(value)) {
      bytes += 1 + value.length;
      for (let i = 0; i < value.length && bytes <= max; i++) pending.push(value[i]);
    } else if (isObject(value)) {
      bytes += 1;
      for (const key in value) {
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        bytes += key.length + 4;
        if (bytes > max) break;
        pending.push(value[key]);
      }
    } else bytes += 1;
  }
  return bytes;
}

/** Bytes of `value` as compact JSON (UTF-8). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}

/**
 * Bytes of `value` as compact JSON when at most `max`, else some number above `max` (without serialising a
 * value that is plainly larger: UTF-8 has at least one byte per UTF-16 unit).
 */
export function jsonBytesWithin(value: unknown, max: number): number {
  const atLeast = jsonBytesAtLeast(value, max);
  return atLeast > max ? atLeast : jsonBytes(value);
}

/** Why one request may not set `properties` on a person (PERSON_SET_MAX_KEYS / _BYTES), or null. */
export function setLimitProblem(properties: Json, limits: PersonSetLimits): string | null {
  if (countSetValues(properties, limits.maxKeys) > limits.maxKeys) {
    return `more than ${limits.maxKeys} keys (PERSON_SET_MAX_KEYS)`;
  }
  if (jsonBytesWithin(properties, limits.maxBytes) > limits.maxBytes) {
    return `more than ${limits.maxBytes} bytes (PERSON_SET_MAX_BYTES)`;
  }
  return null;
}

/**
 * `properties` with the update applied: `setOnce` keys only where absent, then every `set` key, then the `unset`
 * keys removed (PostHog's order within one event: plugin-server/src/worker/ingestion/persons/person-update.ts,
 * `computeEventPropertyUpdates` / `applyEventPropertyUpdates`).
 */
export function applyUpdate(properties: Json, update: PersonPropertyUpdate): Json {
  const unset = new Set(update.unset ?? []);
  const out: Json = {};
  for (const key of Object.keys(properties)) if (!unset.has(key)) setOwn(out, key, properties[key]);
  for (const key of Object.keys(update.setOnce)) {
    if (!Object.prototype.hasOwnProperty.call(properties, key) && !unset.has(key)) {
      setOwn(out, key, update.setOnce[key]);
    }
  }
  for (const key of Object.keys(update.set)) if (!unset.has(key)) setOwn(out, key, update.set[key]);
  return out;
}

/** Whether `update` changes `properties` at all (a key set, a `setOnce` key absent, an `unset` key present). */
export function updateChanges(properties: Json, update: PersonPropertyUpdate): boolean {
  const has = (key: string) => Object.prototype.hasOwnProperty.call(properties, key);
  if (Object.keys(update.set).length) return true;
  if (Object.keys(update.setOnce).some((key) => !has(key))) return true;
  return (update.unset ?? []).some(has);
}

export interface TrimResult {
  properties: Json;
  /** Bytes of `properties` as compact JSON. */
  bytes: number;
  /** The keys removed, in the order they were. */
  removed: string[];
}

/**
 * `properties` within `maxBytes` of compact JSON: the largest properties are removed first (fewest keys lost),
 * those of PROTECTED_PERSON_PROPERTIES only once no other is left. Unchanged when already within.
 */
export function trimProperties(properties: Json, maxBytes: number): TrimResult {
  let bytes = jsonBytes(properties);
  if (bytes <= maxBytes) return { properties, bytes, removed: [] };
  // Each entry is `"key":value,` in the object's text.
  const entries = Object.keys(properties).map((key) => ({
    key,
    size: jsonBytes(key) + jsonBytes(properties[key]) + 2,
    protected: PROTECTED_PERSON_PROPERTIES.has(key),
  }));
  entries.sort(
    (a, b) =>
      Number(a.protected) - Number(b.protected) ||
      b.size - a.size ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
  // The object's text is `{`, its entries without the last comma, `}`: the sum of the entries plus one byte.
  let left = entries.length;
  const removed = new Set<string>();
  for (const entry of entries) {
    if (bytes <= maxBytes) break;
    removed.add(entry.key);
    left--;
    bytes = left ? bytes - entry.size : 2;
  }
  const out: Json = {};
  for (const key of Object.keys(properties)) if (!removed.has(key)) setOwn(out, key, properties[key]);
  return { properties: out, bytes: jsonBytes(out), removed: [...removed] };
}

export interface BoundedUpdate {
  /** The properties to store, within `maxBytes`. */
  properties: Json;
  bytes: number;
  /** Whether the update was applied (false: it would have passed `maxBytes`, and was left out). */
  applied: boolean;
  /** Keys of the stored properties removed because they were already past `maxBytes`. */
  trimmed: string[];
}

/**
 * A person's properties after `update`, bounded by PERSON_PROPERTIES_MAX_BYTES (`maxBytes`): the update applied
 * when the result fits; else, when the person was already past the bound, its properties trimmed
 * (`trimProperties`) and the update applied if it then fits; else the person's properties unchanged and the
 * update left out, as PostHog refuses a person update past its size limit.
 */
export function boundedUpdate(existing: Json, update: PersonPropertyUpdate, maxBytes: number): BoundedUpdate {
  const merged = applyUpdate(existing, update);
  const mergedBytes = jsonBytes(merged);
  if (mergedBytes <= maxBytes) return { properties: merged, bytes: mergedBytes, applied: true, trimmed: [] };
  const trimmed = trimProperties(existing, maxBytes);
  if (!trimmed.removed.length) {
    return { properties: existing, bytes: trimmed.bytes, applied: false, trimmed: [] };
  }
  const retried = applyUpdate(trimmed.properties, update);
  const retriedBytes = jsonBytes(retried);
  if (retriedBytes <= maxBytes) {
    return { properties: retried, bytes: retriedBytes, applied: true, trimmed: trimmed.removed };
  }
  return { properties: trimmed.properties, bytes: trimmed.bytes, applied: false, trimmed: trimmed.removed };
}
