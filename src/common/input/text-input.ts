/**
 * Text the service refuses in API input (docs/decisions.md §1): the NUL character, which PostgreSQL cannot store in
 * text or jsonb, and unpaired UTF-16 surrogates, which cannot be encoded as UTF-8 (the driver would silently
 * replace them, so two distinct values could collapse into one). Pure functions, used by the global input check.
 */

export type TextProblem = 'nul' | 'surrogate';

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with a string, or null when it is acceptable. */
export function textProblem(value: string): TextProblem | null {
  if (value.includes('\u0000')) return 'nul';
  if (LONE_SURROGATE.test(value)) return 'surrogate';
  return null;
}

export interface InputViolation {
  /** Path of the offending value: object keys and array indexes, outermost first. */
  path: string[];
  problem: TextProblem | 'depth';
  /** Set when the offending text is an object key rather than a value. */
  key?: boolean;
}

/**
 * The first string (value or object key) in a parsed JSON-like value that `textProblem` refuses, or a
 * nesting deeper than `maxDepth` (objects and arrays, the outermost counting 1); null when all is well. Walks
 * only plain objects, arrays and strings: other values (numbers, Buffers of raw bodies, dates) are left alone.
 */
export function findInvalidInput(value: unknown, maxDepth: number): InputViolation | null {
  const path: string[] = [];
  const visit = (node: unknown, depth: number): InputViolation | null => {
    if (typeof node === 'string') {
      const problem = textProblem(node);
      return problem ? { path: [...path], problem } : null;
    }
    if (node === null || typeof node !== 'object') return null;
    const isArray = Array.isArray(node);
    if (!isArray && !isPlainObject(node)) return null;
    if (depth + 1 > maxDepth) return { path: [...path], problem: 'depth' };
    const entries: [string, unknown][] = isArray
      ? (node as unknown[]).map((v, i) => [String(i), v])
      : Object.entries(node);
    for (const [key, child] of entries) {
      path.push(key);
      if (!isArray) {
        const problem = textProblem(key);
        if (problem) return { path: [...path], problem, key: true };
      }
      const found = visit(child, depth + 1);
      path.pop();
      if (found) return found;
    }
    return null;
  };
  return visit(value, 0);
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A path as an error's `attr` (nested names joined with `__`), with refused characters escaped. */
export function attrOf(path: readonly string[]): string | null {
  if (!path.length) return null;
  return path.map(escapeText).join('__');
}

/** The string with NUL and unpaired surrogates written as `\uXXXX`, safe to echo in an error. */
export function escapeText(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const high = code >= 0xd800 && code <= 0xdbff;
    const low = code >= 0xdc00 && code <= 0xdfff;
    if (high && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += value[i] + value[i + 1];
        i++;
        continue;
      }
    }
    out += code === 0 || high || low ? `\\u${code.toString(16).padStart(4, '0')}` : value[i];
  }
  return out;
}
