import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COMMA = 0x2c; // ,

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** What a scan of raw JSON text found first: nesting deeper than allowed, more values than allowed, or neither. */
export type JsonShapeProblem = 'depth' | 'values' | null;

/**
 * Scans raw JSON text for the first exceeded limit: nesting deeper than `maxDepth` (the outermost counting 1) or
 * more than `maxValues` values (objects, arrays, strings, numbers, literals; object keys excluded — the count the
 * public routes' streaming parser keeps). One pass over the bytes, tracking only strings, brackets and commas, so
 * it runs before the parser (whose recursion a deeply nested body would exhaust, and which would build every
 * value of a body of a million empty objects) in time linear in the body and without allocating. Values of valid
 * JSON are the root, plus one per element of each non-empty container: one more than its commas. Malformed text
 * is left to the parser.
 */
export function jsonShapeProblem(text: Uint8Array, maxDepth: number, maxValues = Infinity): JsonShapeProblem {
  let depth = 0;
  let inString = false;
  // The root counts once anything is there.
  let values = 0;
  let started = false;
  // A container just opened: the next significant byte says whether it holds a first element.
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (isSpace(byte)) continue;
    if (!started) {
      started = true;
      if (++values > maxValues) return 'values';
    }
    if (opened) {
      opened = false;
      if (byte !== CLOSE_OBJECT && byte !== CLOSE_ARRAY && ++values > maxValues) return 'values';
    }
    if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) return 'depth';
      opened = true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    } else if (byte === COMMA && depth > 0 && ++values > maxValues) {
      return 'values';
    }
  }
  return null;
}

/** Whether raw JSON text nests objects and arrays deeper than `maxDepth` (the outermost counting 1). */
export function jsonDepthExceeds(text: Uint8Array, maxDepth: number): boolean {
  return jsonShapeProblem(text, maxDepth) === 'depth';
}

/** An error body-parser passes on with its status (400 or 415) and `type`; the exception filter renders it. */
export class JsonBodyError extends Error {
  readonly expose = true;
  readonly statusCode: number;
  constructor(
    readonly status: number,
    readonly type:
      'entity.too.deep' | 'entity.too.many.values' | 'entity.invalid.utf8' | 'charset.unsupported',
    message: string,
  ) {
    super(message);
    this.statusCode = status;
  }
}

/**
 * The `verify` hook of the JSON body parser: runs on the raw bytes before they are decoded and parsed. JSON is
 * UTF-8 (RFC 8259): another declared charset is 415, bytes that are not valid UTF-8 are 400 (instead of
 * being replaced by U+FFFD), nesting deeper than `maxDepth` is 400, and more than `maxValues` values is 413
 * `payload_too_large` — all found before the parser builds anything.
 */
export function verifyJsonBody(maxDepth: number, maxValues = Infinity) {
  return (_req: IncomingMessage, _res: ServerResponse, body: Buffer, encoding: string): void => {
    if (!/^utf-?8$/i.test(encoding)) {
      throw new JsonBodyError(415, 'charset.unsupported', 'Unsupported charset: send JSON as UTF-8.');
    }
    if (!isUtf8(body)) {
      throw new JsonBodyError(400, 'entity.invalid.utf8', 'Malformed request body: not valid UTF-8.');
    }
    const problem = jsonShapeProblem(body, maxDepth, maxValues);
    if (problem === 'depth') {
      throw new JsonBodyError(
        400,
        'entity.too.deep',
        `Request body is nested too deeply: at most ${maxDepth} levels of objects and arrays.`,
      );
    }
    if (problem === 'values') {
      throw new JsonBodyError(
        413,
        'entity.too.many.values',
        `Request body has too many JSON values: at most ${maxValues}.`,
      );
    }
  };
}
