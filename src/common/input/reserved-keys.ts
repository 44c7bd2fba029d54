/**
 * Object keys that name a member of `Object.prototype` (`__proto__`, `constructor`, `toString`, …) are plain
 * names in API input: free-form maps (person properties, plugin configs, destination configs) store them like
 * any other key, and as a field of a DTO they are unknown fields like any other. class-transformer, which turns
 * bodies into DTOs, skips such keys silently (it must not call or overwrite members of the object it builds), so
 * they are escaped before the transformation and restored after it: `escapeReservedKeys` → transform and
 * validate → `restoreReservedKeys`. Error paths name the original key (`unescapeReservedKey`).
 *
 * The escape prefixes the key with NUL, which no accepted input can contain (the input check refuses it), so an
 * escaped key can never collide with a key a client sent.
 */

const RESERVED = new Set(Object.getOwnPropertyNames(Object.prototype));
const ESCAPE = '\u0000';

export function isReservedKey(key: string): boolean {
  return RESERVED.has(key);
}

/** The key as the client sent it, for an escaped key; any other key unchanged. */
export function unescapeReservedKey(key: string): string {
  return key.startsWith(ESCAPE) && RESERVED.has(key.slice(1)) ? key.slice(1) : key;
}

/** Every escaped key in a text (an error's detail or attr) written back as the client sent it. */
export function unescapeReservedKeysIn(text: string): string {
  if (!text.includes(ESCAPE)) return text;
  return text
    .split(ESCAPE)
    .map((part, i) => {
      if (i === 0) return part;
      const name = /^[A-Za-z_]+/.exec(part)?.[0] ?? '';
      return RESERVED.has(name) ? part : ESCAPE + part;
    })
    .join('');
}

const isPlain = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * A copy of a parsed JSON value with reserved keys escaped at every depth (parts without any are shared, not
 * copied). Only plain objects and arrays are walked.
 */
export function escapeReservedKeys<T>(value: T): T {
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item: unknown) => {
      const escaped = escapeReservedKeys(item);
      changed ||= escaped !== item;
      return escaped;
    });
    return (changed ? out : value) as T;
  }
  if (!isPlain(value)) return value;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const escaped = escapeReservedKeys(child);
    const name = RESERVED.has(key) ? ESCAPE + key : key;
    changed ||= escaped !== child || name !== key;
    out[name] = escaped;
  }
  return (changed ? out : value) as T;
}

/**
 * Restores escaped keys, in place, in the objects of a transformed value (plain objects, arrays and DTO
 * instances), defining each as an own data property, so `__proto__` is a key and never the prototype. Keys keep
 * their order.
 */
export function restoreReservedKeys<T>(value: T, depth = 0): T {
  if (value === null || typeof value !== 'object' || depth > 256) return value;
  if (ArrayBuffer.isView(value) || value instanceof Date || value instanceof Map || value instanceof Set) {
    return value;
  }
  const node = value as Record<string, unknown>;
  const keys = Object.keys(node);
  for (const key of keys) restoreReservedKeys(node[key], depth + 1);
  if (!Array.isArray(node) && keys.some((key) => unescapeReservedKey(key) !== key)) {
    const entries = keys.map((key) => [unescapeReservedKey(key), node[key]] as const);
    for (const key of keys) delete node[key];
    for (const [key, child] of entries) {
      Object.defineProperty(node, key, {
        value: child,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return value;
}
