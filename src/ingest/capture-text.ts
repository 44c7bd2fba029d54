/**
 * Text that PostgreSQL cannot store as sent: NUL (`\u0000`, refused in text and jsonb) and lone UTF-16
 * surrogates (refused in jsonb, silently replaced in text, which would merge two distinct ids into one). On the
 * public capture path such a value is dropped — never a 500, never the whole batch lost — and noted in
 * `DroppedValues`, which capture logs once per request.
 */

type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };

/** The text with NUL and lone surrogates shown as U+FFFD (for log lines). */
const printable = (text: string): string =>
  (text.replaceAll('\u0000', '\ufffd') as unknown as WellFormed).toWellFormed();

/** What is wrong with a string for storage, or null when nothing is. */
export function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'NUL character';
  if (!(text as unknown as WellFormed).isWellFormed()) return 'lone UTF-16 surrogate';
  return null;
}

/** Whether a project token from a public request can be looked up at all (longer ones, or with NUL, match none). */
export function isLookupableToken(token: string): boolean {
  return token.length <= 64 && textProblem(token) === null;
}

/** The values dropped from one capture request, for one log line. */
export class DroppedValues {
  /** Most entries kept for the log line; the count covers them all. */
  static readonly MAX_LISTED = 20;
  readonly listed: { attr: string; problem: string }[] = [];
  count = 0;

  add(attr: string, problem: string): void {
    this.count++;
    if (this.listed.length < DroppedValues.MAX_LISTED) this.listed.push({ attr, problem });
  }
}

/** Decoded bodies known to hold no text with a `textProblem` (see `markWithoutBadText`). */
const withoutBadTextBodies = new WeakSet<object>();
const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * Marks a value `JSON.parse` made of `json` as holding no NUL and no lone surrogate, in any key or string, when
 * the text has no `\u` escape: a NUL or a lone surrogate can only come from one (a raw NUL is not valid JSON,
 * and UTF-8 decoding turns invalid or surrogate bytes into U+FFFD). Capture then skips its own checks of every
 * value; a text with an escape (or a literal backslash followed by `u`) is checked value by value, as before.
 */
export function markWithoutBadText(value: unknown, json: Buffer): void {
  if (value !== null && typeof value === 'object' && json.indexOf(UNICODE_ESCAPE) === -1) {
    withoutBadTextBodies.add(value);
  }
}

/** Whether `markWithoutBadText` found this decoded body free of bad text. */
export function isMarkedWithoutBadText(value: unknown): boolean {
  return value !== null && typeof value === 'object' && withoutBadTextBodies.has(value);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A JSON value without the strings (values or keys) that have a `textProblem`: an object loses the offending
 * property, an array the offending element (a copy is made only when something is dropped; a clean value is
 * returned as it is). Keys such as `__proto__` stay plain own properties.
 */
export function withoutBadText(value: unknown, attr: string, dropped: DroppedValues): unknown {
  // Most values have nothing to drop: they are kept as they are, not copied.
  if (!hasBadText(value)) return value;
  return copyWithoutBadText(value, attr, dropped);
}

/** Whether a key or string anywhere in `value` cannot be stored. Iterative, so any depth is safe. */
function hasBadText(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (textProblem(value)) return true;
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) pending.push(value[i]);
    } else if (isPlainObject(value)) {
      for (const key of Object.keys(value)) {
        if (textProblem(key)) return true;
        pending.push(value[key]);
      }
    }
  }
  return false;
}

function copyWithoutBadText(value: unknown, attr: string, dropped: DroppedValues): unknown {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const problem = typeof item === 'string' ? textProblem(item) : null;
      if (problem) dropped.add(`${attr}__${i}`, problem);
      else out.push(copyWithoutBadText(item, `${attr}__${i}`, dropped));
    });
    return out;
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = value[key];
    const problem = textProblem(key) ?? (typeof item === 'string' ? textProblem(item) : null);
    if (problem) {
      dropped.add(`${attr}__${printable(key)}`, problem);
      continue;
    }
    Object.defineProperty(out, key, {
      value: copyWithoutBadText(item, `${attr}__${key}`, dropped),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return out;
}
