/**
 * What one captured event asks of its person, as every ingestion sink hands it to `PersonUpdatesService`
 * (analytics events of `/e/`, `/batch/`, `/capture/`, `/i/v0/e/`, and the `$snapshot` events of recordings), and
 * how the events of one request are folded into one update per person, in the order they were sent.
 *
 * PostHog handles each event by itself, in order (plugin-server/src/worker/ingestion/persons/person-update.ts,
 * `computeEventPropertyUpdates` and `applyEventPropertyUpdates`): within an event, `$set_once` keys absent from
 * the person first, then `$set` keys, then `$unset` keys removed. Folding a request's events with
 * `foldPersonEvent` gives the same properties as applying them one by one, with one write per person.
 */
import type { PersonPropertyUpdate } from './person-properties.js';

type Json = Record<string, unknown>;

/** Most keys one event's `$set` / `$set_once` / `$unset` writes; the rest are ignored. */
export const PERSON_UPDATE_MAX_KEYS = 1000;

/** What one event asks of its person. */
export interface PersonEvent {
  distinctId: string;
  /**
   * The other distinct id the event puts on the same person (`$anon_distinct_id` of an `$identify`, `alias` of
   * a `$create_alias` / `$merge_dangerously`), or null.
   */
  linkedId: string | null;
  set: Json | null;
  setOnce: Json | null;
  /** The event's `$unset` as sent: an array of names, or an object whose keys are taken (`unsetKeys`). */
  unset: unknown;
}

/** A fold in progress: the update of one person, its keys disjoint between set, setOnce and unset. */
export interface FoldedUpdate extends PersonPropertyUpdate {
  unset: string[];
}

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const has = (object: Json, key: string) => Object.prototype.hasOwnProperty.call(object, key);

/** Sets an own property, also for the key `__proto__`. */
function setOwn(target: Json, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The keys of an `$unset` (an array of names; an object's keys are taken too, as PostHog does), at most
 * PERSON_UPDATE_MAX_KEYS. A key that cannot be stored (NUL, lone surrogates) is in no person's properties, so
 * removing it changes nothing.
 */
export function unsetKeys(value: unknown): string[] {
  const keys: unknown[] = Array.isArray(value) ? value : isObject(value) ? Object.keys(value) : [];
  const out: string[] = [];
  for (const key of keys) {
    if (out.length >= PERSON_UPDATE_MAX_KEYS) break;
    if (typeof key === 'string') out.push(key);
  }
  return out;
}

/** An empty update. */
export const emptyFold = (): FoldedUpdate => ({ set: {}, setOnce: {}, unset: [] });

/**
 * Folds one event's `$set_once`, `$set` and `$unset` (in that order, PostHog's) into `into`, so that applying
 * the folded update gives what applying every event in turn would:
 * - `$set_once` k: ignored when k is already set or set once by an earlier event; after an `$unset` of k it is
 *   a `$set` (the key is absent by then);
 * - `$set` k: replaces any earlier `$set_once`, `$set` or `$unset` of k;
 * - `$unset` k: replaces any earlier `$set` or `$set_once` of k.
 */
export function foldPersonEvent(
  into: FoldedUpdate,
  event: Pick<PersonEvent, 'set' | 'setOnce'> & { unset: readonly string[] },
): void {
  const unset = new Set(into.unset);
  if (event.setOnce) {
    for (const key of Object.keys(event.setOnce)) {
      if (has(into.set, key) || has(into.setOnce, key)) continue;
      if (unset.has(key)) {
        unset.delete(key);
        setOwn(into.set, key, event.setOnce[key]);
      } else setOwn(into.setOnce, key, event.setOnce[key]);
    }
  }
  if (event.set) {
    for (const key of Object.keys(event.set)) {
      unset.delete(key);
      delete into.setOnce[key];
      setOwn(into.set, key, event.set[key]);
    }
  }
  for (const key of event.unset) {
    delete into.set[key];
    delete into.setOnce[key];
    unset.add(key);
  }
  into.unset = [...unset];
}
