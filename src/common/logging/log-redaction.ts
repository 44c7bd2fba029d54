/**
 * Credentials kept out of log lines, as pino's `redact` option kept them with these paths:
 *
 *     req.headers.authorization, req.headers.cookie, req.headers["x-api-key"],
 *     *.secret, *.password, *.token, *.api_key, *.personal_api_key
 *
 * that is, in every object at the top level of a line (a field of the logged object after its serializer, a child
 * logger's binding, or an object interpolated into the message by `%o`, `%O` or `%j`), each own enumerable field
 * named `secret`, `password`, `token`, `api_key` or `personal_api_key`, and in a `req` object's `headers` the
 * `authorization`, `cookie` and `x-api-key` headers, are written `[redacted]`; on a copy (same prototype, the
 * same own enumerable fields in the same order), never on the caller's object. pino's option parses each path
 * again for every value of every line (thousands of short strings per request: about a tenth of a small request's
 * garbage, docs/performance.md); these functions test the few names directly. One difference, and only there: a
 * string at the top level of a line (the message, a binding) is written by pino's own string writer, which keeps
 * a lone UTF-16 surrogate as it is (U+FFFD once encoded) where the redacting writer escaped it (`\udXXX`).
 */

/** What a redacted value is written as. */
export const LOG_CENSOR = '[redacted]';

/** Fields of a logged object whose values never reach a log line. */
const CENSORED_FIELDS = ['secret', 'password', 'token', 'api_key', 'personal_api_key'] as const;

/** Headers of a logged `req` object that are credentials. */
const CENSORED_HEADERS = ['authorization', 'cookie', 'x-api-key'] as const;

type Fields = Record<string, unknown>;

const isEnumerableOwn = (value: object, key: string) =>
  Object.prototype.propertyIsEnumerable.call(value, key);

/** An object whose fields are redacted (pino's redaction copied arrays and dates without touching them). */
const isRedactable = (value: unknown): value is object =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);

/** A copy of `value` as pino's redaction made it: its prototype, its own enumerable fields in their order. */
function copyOf(value: object): Fields {
  const copy = Object.create(Object.getPrototypeOf(value) as object | null) as Fields;
  for (const key in value) {
    if (Object.prototype.hasOwnProperty.call(value, key)) copy[key] = (value as Fields)[key];
  }
  return copy;
}

/** `value`, or a copy of it with each of `names` it has (own, enumerable) redacted. */
function withCensored(value: object, names: readonly string[]): object {
  if (!names.some((name) => isEnumerableOwn(value, name))) return value;
  const copy = copyOf(value);
  for (const name of names) if (isEnumerableOwn(copy, name)) copy[name] = LOG_CENSOR;
  return copy;
}

/** The value of the top-level field `key` of a log line (or binding) as it is written: redacted where it must be. */
export function redactLogValue(key: string, value: unknown): unknown {
  if (!isRedactable(value)) return value;
  let out = value;
  if (key === 'req' && isEnumerableOwn(value, 'headers')) {
    const headers = (value as Fields).headers;
    if (isRedactable(headers)) {
      const redacted = withCensored(headers, CENSORED_HEADERS);
      if (redacted !== headers) {
        const copy = copyOf(value);
        copy.headers = redacted;
        out = copy;
      }
    }
  }
  return withCensored(out, CENSORED_FIELDS);
}

/**
 * `fields` (a logged object or a child's bindings) with each top-level value redacted, but those of `serialized`:
 * their serializers' results are redacted instead (`redactedSerializer`), pino's redaction having applied to what
 * a serializer returned. `fields` itself when nothing is redacted.
 */
export function redactLogFields(fields: Fields, serialized: ReadonlySet<string>): Fields {
  let out = fields;
  for (const key in fields) {
    if (!Object.prototype.hasOwnProperty.call(fields, key) || serialized.has(key)) continue;
    const value = fields[key];
    const redacted = redactLogValue(key, value);
    if (redacted === value) continue;
    if (out === fields) out = copyOf(fields);
    out[key] = redacted;
  }
  return out;
}

/** `serializer` for the top-level field `key`, its result redacted. */
export function redactedSerializer<T>(key: string, serializer: (value: T) => unknown): (value: T) => unknown {
  return (value) => redactLogValue(key, serializer(value));
}

/**
 * The arguments of a log call with the objects interpolated into its message (`%o`, `%O`, `%j`: those after the
 * message string) redacted field by field, as pino's redaction did when it wrote them.
 */
export function redactInterpolated(args: unknown[]): unknown[] {
  const at = typeof args[0] === 'string' ? 1 : typeof args[1] === 'string' ? 2 : args.length;
  let out = args;
  for (let i = at; i < args.length; i++) {
    const arg = args[i];
    let redacted: unknown = arg;
    if (Array.isArray(arg)) {
      const items = arg.map((item: unknown) => redactLogValue('', item));
      if (items.some((item, j) => item !== arg[j])) redacted = items;
    } else if (isRedactable(arg)) redacted = redactLogFields(arg as Fields, NONE);
    if (redacted === arg) continue;
    if (out === args) out = [...args];
    out[i] = redacted;
  }
  return out;
}

const NONE: ReadonlySet<string> = new Set();

/** The part of a pino logger whose bindings `withRedactedBindings` redacts. */
interface BindingLogger {
  child(bindings: Fields, options?: object): unknown;
  setBindings(bindings: Fields): void;
}

/**
 * `logger` with the bindings of its children (`child`) and its own new ones (`setBindings`) redacted as logged
 * fields are (pino applies no formatter to a child's bindings): the methods are replaced on `logger` itself, so its
 * children and theirs, which inherit from it, redact theirs too. The keys of `serialized` are redacted by their
 * serializers.
 */
export function withRedactedBindings<L extends object>(logger: L, serialized: ReadonlySet<string>): L {
  const { child, setBindings } = logger as unknown as BindingLogger;
  Object.defineProperties(logger, {
    child: {
      value(this: BindingLogger, bindings: Fields, options?: object) {
        return child.call(this, redactLogFields(bindings, serialized), options);
      },
      writable: true,
      configurable: true,
    },
    setBindings: {
      value(this: BindingLogger, bindings: Fields) {
        setBindings.call(this, redactLogFields(bindings, serialized));
      },
      writable: true,
      configurable: true,
    },
  });
  return logger;
}
