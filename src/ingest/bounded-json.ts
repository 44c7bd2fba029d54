/**
 * A streaming JSON parser for the public routes (`/s/`, `/flags`, `/decide`), whose bodies come from anyone.
 * It takes the decoded body in chunks, as they come out of the decompressor, builds the value as it goes and
 * stops at the first exceeded limit — decoded bytes, nesting depth, values in total, events per request and
 * rrweb events per `$snapshot` — so a small compressed body that expands into millions of values costs no more
 * than the limits allow, and the whole decoded text is never held as one string.
 *
 * The result equals `JSON.parse` of the same text (same values, later duplicate keys win, `__proto__` is an own
 * property, never the prototype), and malformed JSON is rejected like `JSON.parse` would.
 */
import { ApiError } from '../common/errors/api-error.js';

export interface JsonLimits {
  /** Most decoded bytes. */
  maxBytes: number;
  /** Most nested arrays and objects. */
  maxDepth: number;
  /** Most values (objects, arrays, strings, numbers, booleans, nulls; keys excluded). */
  maxValues: number;
  /**
   * Most members of one object (a repeated key counted each time): a huge object costs far more per key than
   * other values (its keys are interned, its table rehashed as it grows, at once), so it is bounded on its own.
   */
  maxKeys?: number;
  /** Most elements of the events array: the root array, or the `batch` array of a root object. */
  maxEvents?: number;
  /** Most elements of an array under a `$snapshot_data` key. */
  maxSnapshotEvents?: number;
  /**
   * Most values kept in an object under a `$set` or `$set_once` key (its keys and array elements, nested
   * included): past it the parser keeps one more and builds nothing further of it, so capture sees it is too
   * large (PERSON_SET_MAX_KEYS) without a huge object ever being built.
   */
  maxSetValues?: number;
}

export interface JsonHooks {
  /**
   * Called as soon as the first element of the events array is complete, before the rest is read; `batchRoot`
   * is the root object (so far) when the events are its `batch`. It may throw to stop the parse.
   */
  onFirstEvent?(event: unknown, batchRoot: Record<string, unknown> | null): void;
}

type Container = unknown[] | Record<string, unknown>;

interface Frame {
  value: Container;
  array: boolean;
  /** The key the next value of an object goes under. */
  key: string;
  /** Elements (arrays) or members (objects) so far. */
  count: number;
  /** The array's element limit and what it counts, if any. */
  limit: number;
  counts: 'events' | 'snapshot' | null;
  /** The `$set` / `$set_once` object this frame is in, and how many values it holds so far. */
  set: { values: number } | null;
  /** Past `maxSetValues`: what is parsed into this frame is not kept. */
  discard: boolean;
}

// Parser modes: what the next significant byte may be.
const VALUE = 0; // a value
const VALUE_OR_END = 1; // a value or `]` (after `[`)
const AFTER = 2; // `,` or the container's end
const KEY = 3; // a key (after `,` in an object)
const KEY_OR_END = 4; // a key or `}` (after `{`)
const COLON = 5;
const DONE = 6; // only white space

const BOM = [0xef, 0xbb, 0xbf];
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDelimiter = (c: number) => c === 0x2c || c === 0x5d || c === 0x7d || isSpace(c);

export const malformedJson = () =>
  ApiError.validation('Malformed request body: not valid JSON.', null, 'parse_error');

/** Sets an own property, also for the key `__proto__` (which plain assignment would treat as the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

export class BoundedJsonParser {
  private readonly stack: Frame[] = [];
  private root: unknown = undefined;
  private mode = VALUE;
  private bytes = 0;
  private valueCount = 0;
  private bomBytes = 0;
  // A string that continues in the next chunk.
  private stringPieces: Buffer[] | null = null;
  private stringIsKey = false;
  private stringEscaped = false;
  private stringAfterBackslash = false;
  // A number or literal that continues in the next chunk.
  private scalar: string | null = null;
  private stopped: unknown = null;

  constructor(
    private readonly limits: JsonLimits,
    private readonly hooks: JsonHooks = {},
  ) {}

  /** Decoded bytes read so far. */
  get byteCount(): number {
    return this.bytes;
  }

  /** Values built so far. */
  get values(): number {
    return this.valueCount;
  }

  /** Makes the next `write` (or `end`) throw `error`: another check (the project token) failed meanwhile. */
  stop(error: unknown): void {
    this.stopped ??= error;
  }

  /**
   * Parses the next chunk of the body. Over 80 lines on purpose: its loop over the chunk's bytes is the hot path
   * of every capture body, and the states it switches between share its locals; split, it would make a call per
   * token.
   */
  write(chunk: Buffer): void {
    if (this.stopped) throw this.stopped;
    this.bytes += chunk.length;
    if (this.bytes > this.limits.maxBytes) throw ApiError.payloadTooLarge(this.limits.maxBytes, true);
    let i = 0;
    // A UTF-8 byte order mark at the very start is skipped (its bytes may come in separate chunks).
    while (this.bomBytes < BOM.length && i < chunk.length) {
      if (chunk[i] === BOM[this.bomBytes]) {
        this.bomBytes++;
        i++;
      } else if (this.bomBytes) {
        throw malformedJson();
      } else {
        this.bomBytes = BOM.length;
      }
    }
    if (this.stringPieces) {
      i = this.readString(chunk, 0);
      if (i < 0) return;
    } else if (this.scalar !== null) {
      i = this.readScalar(chunk, 0);
      if (i < 0) return;
    }
    const n = chunk.length;
    while (i < n) {
      const c = chunk[i];
      if (isSpace(c)) {
        i++;
        continue;
      }
      switch (this.mode) {
        case VALUE:
        case VALUE_OR_END:
          if (c === 0x5d && this.mode === VALUE_OR_END) {
            this.close();
            i++;
          } else if (c === 0x7b) {
            this.open({}, false);
            i++;
          } else if (c === 0x5b) {
            this.open([], true);
            i++;
          } else if (c === QUOTE) {
            this.stringPieces = [];
            this.stringIsKey = false;
            this.stringEscaped = false;
            i = this.readString(chunk, i + 1);
            if (i < 0) return;
          } else {
            this.scalar = '';
            i = this.readScalar(chunk, i);
            if (i < 0) return;
          }
          break;
        case AFTER: {
          const top = this.stack[this.stack.length - 1];
          if (c === 0x2c) this.mode = top.array ? VALUE : KEY;
          else if ((c === 0x5d && top.array) || (c === 0x7d && !top.array)) this.close();
          else throw malformedJson();
          i++;
          break;
        }
        case KEY:
        case KEY_OR_END:
          if (c === QUOTE) {
            this.stringPieces = [];
            this.stringIsKey = true;
            this.stringEscaped = false;
            i = this.readString(chunk, i + 1);
            if (i < 0) return;
          } else if (c === 0x7d && this.mode === KEY_OR_END) {
            this.close();
            i++;
          } else {
            throw malformedJson();
          }
          break;
        case COLON:
          if (c !== 0x3a) throw malformedJson();
          this.mode = VALUE;
          i++;
          break;
        default:
          throw malformedJson();
      }
    }
  }

  /** The parsed value, once the whole body has been written. */
  end(): unknown {
    if (this.stopped) throw this.stopped;
    if (this.scalar !== null) this.finishScalar();
    if (this.stringPieces || this.mode !== DONE) throw malformedJson();
    return this.root;
  }

  // ---- tokens -------------------------------------------------------------------------------------------

  /** Reads string bytes from `start` up to the closing quote; returns the index after it, or -1 at chunk end. */
  private readString(chunk: Buffer, start: number): number {
    const n = chunk.length;
    let j = start;
    if (this.stringAfterBackslash) {
      this.stringAfterBackslash = false;
      j++;
    }
    while (j < n) {
      const d = chunk[j];
      if (d === QUOTE) {
        const pieces = this.stringPieces as Buffer[];
        this.stringPieces = null;
        let text: string;
        if (!pieces.length) {
          text = chunk.toString('utf8', start, j);
        } else {
          pieces.push(chunk.subarray(start, j));
          text = Buffer.concat(pieces).toString('utf8');
        }
        this.finishString(text);
        return j + 1;
      }
      if (d === BACKSLASH) {
        this.stringEscaped = true;
        j += 2;
        continue;
      }
      // Control characters must be escaped in JSON strings.
      if (d < 0x20) throw malformedJson();
      j++;
    }
    if (j > n) this.stringAfterBackslash = true;
    (this.stringPieces as Buffer[]).push(chunk.subarray(start, n));
    return -1;
  }

  private finishString(raw: string): void {
    let text = raw;
    if (this.stringEscaped) {
      try {
        text = JSON.parse(`"${raw}"`) as string;
      } catch {
        throw malformedJson();
      }
    }
    if (this.stringIsKey) {
      this.stack[this.stack.length - 1].key = text;
      this.mode = COLON;
    } else {
      this.put(text);
    }
  }

  /** Reads a number or literal up to its delimiter; returns the delimiter's index, or -1 at chunk end. */
  private readScalar(chunk: Buffer, start: number): number {
    const n = chunk.length;
    let j = start;
    while (j < n && !isDelimiter(chunk[j])) j++;
    this.scalar += chunk.toString('latin1', start, j);
    if ((this.scalar as string).length > 64) throw malformedJson();
    if (j === n) return -1;
    this.finishScalar();
    return j;
  }

  private finishScalar(): void {
    const token = this.scalar as string;
    this.scalar = null;
    let value: unknown;
    if (token === 'true') value = true;
    else if (token === 'false') value = false;
    else if (token === 'null') value = null;
    else if (NUMBER.test(token)) value = Number(token);
    else throw malformedJson();
    this.put(value);
  }

  // ---- structure ----------------------------------------------------------------------------------------

  private put(value: unknown): void {
    if (++this.valueCount > this.limits.maxValues) {
      throw new ApiError(
        413,
        'payload_too_large',
        `Request body has too many JSON values: at most ${this.limits.maxValues}.`,
      );
    }
    const top = this.stack[this.stack.length - 1];
    if (!top) {
      if (this.mode === DONE) throw malformedJson();
      this.root = value;
      this.mode = DONE;
      return;
    }
    if (top.set) top.set.values++;
    // Past the limit of its `$set` (which holds one value over it, for capture to see), or inside a value
    // that was not kept: not kept either.
    if (top.discard || this.pastSetLimit(top)) {
      this.mode = AFTER;
      return;
    }
    if (top.array) {
      if (++top.count > top.limit) throw this.tooMany(top);
      (top.value as unknown[]).push(value);
      // A first event that is not an object is complete at once.
      if (top.counts === 'events' && top.count === 1 && (value === null || typeof value !== 'object')) {
        this.firstEvent(value);
      }
    } else {
      if (++top.count > (this.limits.maxKeys ?? Infinity)) {
        throw new ApiError(
          413,
          'payload_too_large',
          `Request body has a JSON object with too many keys: at most ${this.limits.maxKeys}.`,
        );
      }
      setOwn(top.value as Record<string, unknown>, top.key, value);
    }
    this.mode = AFTER;
  }

  private pastSetLimit(frame: Frame): boolean {
    return frame.set !== null && frame.set.values > (this.limits.maxSetValues ?? Infinity) + 1;
  }

  private open(value: Container, array: boolean): void {
    if (this.stack.length >= this.limits.maxDepth) {
      throw ApiError.validation(
        `The request body is nested too deeply: at most ${this.limits.maxDepth} levels of arrays and objects.`,
        null,
        'invalid_input',
      );
    }
    const parent = this.stack[this.stack.length - 1];
    this.put(value);
    // Not kept by its parent (past a `$set`'s limit): its contents are parsed and dropped too.
    const discard = !!parent && (parent.discard || this.pastSetLimit(parent));
    let set = parent?.set ?? null;
    if (!set && !array && parent && !parent.array && (parent.key === '$set' || parent.key === '$set_once')) {
      set = { values: 0 };
    }
    let counts: Frame['counts'] = null;
    if (array) {
      if (!parent || (this.stack.length === 1 && !parent.array && parent.key === 'batch')) counts = 'events';
      else if (!parent.array && parent.key === '$snapshot_data') counts = 'snapshot';
    }
    const limit =
      counts === 'events'
        ? (this.limits.maxEvents ?? Infinity)
        : counts === 'snapshot'
          ? (this.limits.maxSnapshotEvents ?? Infinity)
          : Infinity;
    this.stack.push({ value, array, key: '', count: 0, limit, counts, set, discard });
    this.mode = array ? VALUE_OR_END : KEY_OR_END;
  }

  private close(): void {
    const closed = this.stack.pop() as Frame;
    const parent = this.stack[this.stack.length - 1];
    this.mode = parent ? AFTER : DONE;
    if (parent?.counts === 'events' && parent.count === 1) this.firstEvent(closed.value);
  }

  /** Runs the `onFirstEvent` hook; the events array is the innermost frame. */
  private firstEvent(event: unknown): void {
    if (!this.hooks.onFirstEvent) return;
    const batchRoot = this.stack.length === 2 ? (this.stack[0].value as Record<string, unknown>) : null;
    this.hooks.onFirstEvent(event, batchRoot);
  }

  private tooMany(frame: Frame): ApiError {
    const detail =
      frame.counts === 'events'
        ? `Too many events in one request: at most ${frame.limit}.`
        : `Too many rrweb events in one $snapshot event: at most ${frame.limit}.`;
    return new ApiError(413, 'payload_too_large', detail);
  }
}

/**
 * The number of JSON values of `root` (an already parsed JSON value) when it is within `limits` — the same
 * depth, value and element limits the streaming parser enforces — or -1 when it is not (the streaming parser
 * then says which limit, with its own error). Iterative, so any depth is safe.
 */
export function valuesWithinLimits(root: unknown, limits: JsonLimits): number {
  const maxEvents = limits.maxEvents ?? Infinity;
  const maxSnapshotEvents = limits.maxSnapshotEvents ?? Infinity;
  let values = 0;
  // Values still to visit, their depth (1 for the root) and the limit on their elements if they are arrays.
  const pending: unknown[] = [root];
  const depths: number[] = [1];
  const limitsOf: number[] = [maxEvents];
  while (pending.length) {
    const value = pending.pop();
    const depth = depths.pop() as number;
    const limit = limitsOf.pop() as number;
    if (++values > limits.maxValues) return -1;
    if (value === null || typeof value !== 'object') continue;
    if (depth > limits.maxDepth) return -1;
    if (Array.isArray(value)) {
      if (value.length > limit) return -1;
      for (let i = 0; i < value.length; i++) {
        pending.push(value[i]);
        depths.push(depth + 1);
        limitsOf.push(Infinity);
      }
    } else {
      let keys = 0;
      for (const key in value) {
        if (++keys > (limits.maxKeys ?? Infinity)) return -1;
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        pending.push((value as Record<string, unknown>)[key]);
        depths.push(depth + 1);
        limitsOf.push(
          depth === 1 && key === 'batch'
            ? maxEvents
            : key === '$snapshot_data'
              ? maxSnapshotEvents
              : Infinity,
        );
      }
    }
  }
  return values;
}
