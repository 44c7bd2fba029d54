import { AsyncLocalStorage } from 'node:async_hooks';

/** One change of an activity log entry (PostHog's `Change`). */
export interface ActivityChange {
  /** The kind of object changed (the entry's scope: `Organization`, `BatchExport`, …). */
  type: string;
  action: 'changed' | 'created' | 'deleted';
  /** The field changed; null for the object as a whole. */
  field: string | null;
  before: unknown;
  after: unknown;
}

/**
 * What the code handling a write says about it, for its activity log entry: the object (`scope`, `itemId`,
 * `name`), and the `changes` with their values before and after. Everything is optional: the activity log
 * derives what is missing from the route and the answer (src/activity-log/activity-log.interceptor.ts).
 */
export interface ActivityDescription {
  scope?: string;
  itemId?: string | null;
  name?: string | null;
  shortId?: string | null;
  /** The project and organization the entry belongs to, when the route does not say (an organization route). */
  teamId?: number | null;
  organizationId?: string | null;
  changes?: ActivityChange[];
  /**
   * Set by the activity log for a handler marked `@RecordsOwnActivity()`: inserts the entry in the transaction
   * the caller runs in (`recordActivityNow`).
   */
  record?: () => Promise<void>;
  /** Whether the entry was inserted (by `recordActivityNow`). */
  recorded?: boolean;
}

/**
 * Marks a write handler whose service commits before it finishes (an e-mail that must follow the commit): the
 * activity log opens no transaction around it, and the service calls `recordActivityNow()` inside its own
 * transaction, so its entry still commits with the change. Metadata read by the activity log's interceptor.
 */
export const RECORDS_OWN_ACTIVITY = 'activity:records-own';
export function RecordsOwnActivity(): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RECORDS_OWN_ACTIVITY, true, descriptor.value as object);
  };
}

/**
 * Marks a write handler whose whole effect is its request transaction (no e-mail, no call out, nothing kept in
 * memory across it): when PostgreSQL rolls that transaction back for a deadlock or a serialization failure (a lost
 * race with another writer), the activity log's interceptor runs the handler again in a new transaction, up to
 * three times (`retriedOnConflict`), instead of answering an error. Metadata read by that interceptor.
 */
export const RETRIED_ON_CONFLICT = 'activity:retried-on-conflict';
export function RetriedOnConflict(): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RETRIED_ON_CONFLICT, true, descriptor.value as object);
  };
}

/**
 * Inserts the entry of the write being handled in the caller's transaction (a handler marked
 * `@RecordsOwnActivity()`); nothing for any other. Its failure throws, rolling that transaction back. Called
 * once per transaction: a transaction retried after a rollback calls it again.
 */
export async function recordActivityNow(): Promise<void> {
  const current = storage.getStore();
  if (!current?.record) return;
  await current.record();
  current.recorded = true;
}

const storage = new AsyncLocalStorage<ActivityDescription>();

/** Runs `work` with a description the code it calls fills (`describeActivity`, `recordChanges`). */
export function runDescribingActivity<T>(description: ActivityDescription, work: () => T): T {
  return storage.run(description, work);
}

/** Adds to the description of the write being handled; nothing when no write is being logged. */
export function describeActivity(patch: ActivityDescription): void {
  const current = storage.getStore();
  if (!current) return;
  const { changes, ...rest } = patch;
  Object.assign(current, rest);
  if (changes) current.changes = [...(current.changes ?? []), ...changes];
}

/** Names of fields whose values never enter the log (tokens, secrets, passwords, keys, credentials). */
const SECRET_FIELD =
  /token|secret|password|passwd|private|credential|authorization|api_?key|access_?key|signing|cookie/i;

/** Values that are keys whatever their field is called (personal API keys, project secret keys). */
const SECRET_VALUE = /^(phx|phs|pha|phsct)_[A-Za-z0-9]/;

/** What a secret value is replaced with. */
export const MASKED = '********';

/**
 * `value` with the value of every field named like a secret replaced by `MASKED`, at any depth (a destination's
 * config, a plugin config's `config`); strings longer than 1000 characters are cut, arrays past 100 items and
 * objects past 200 keys too.
 */
export function maskSecrets(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === 'string') {
    if (SECRET_VALUE.test(value)) return MASKED;
    return value.length > 1000 ? `${value.slice(0, 1000)}…` : value;
  }
  if (typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  if (depth > 8) return '…';
  if (Array.isArray(value)) return value.slice(0, 100).map((item) => maskSecrets(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>).slice(0, 200)) {
    out[key] = SECRET_FIELD.test(key) && item !== null && item !== '' ? MASKED : maskSecrets(item, depth + 1);
  }
  return out;
}

/** An entity's field name as the API names it (`apiToken` → `api_token`). */
function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * Records the fields of `after` whose value differs from `before` as `changed` (masked: `maskSecrets`), limited to
 * `fields` when given: what a service calls once it has both versions of an object it updated. Entity field names
 * are written as the API's (snake_case).
 */
export function recordChanges(
  type: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields: readonly string[] = Object.keys(after),
): void {
  const changes: ActivityChange[] = [];
  for (const field of fields) {
    const was = maskSecrets(before[field]);
    const now = maskSecrets(after[field]);
    if (JSON.stringify(was) === JSON.stringify(now)) continue;
    changes.push({ type, action: 'changed', field: snakeCase(field), before: was, after: now });
  }
  describeActivity({ changes });
}
