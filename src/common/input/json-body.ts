import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether raw JSON text nests objects and arrays deeper than `maxDepth` (the outermost counting 1). One pass
 * over the bytes, tracking only strings and brackets, so it runs before the parser (whose recursion a deeply
 * nested body would exhaust) and in time linear in the body. Malformed text is left to the parser.
 */
export function jsonDepthExceeds(text: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** An error body-parser passes on with its status (400 or 415) and `type`; the exception filter renders it. */
export class JsonBodyError extends Error {
  readonly expose = true;
  readonly statusCode: number;
  constructor(
    readonly status: number,
    readonly type: 'entity.too.deep' | 'entity.invalid.utf8' | 'charset.unsupported',
    message: string,
  ) {
    super(message);
    this.statusCode = status;
  }
}

/**
 * The `verify` hook of the JSON body parser: runs on the raw bytes before they are decoded and parsed. JSON is
 * UTF-8 (RFC 8259): another declared charset is 415, bytes that are not valid UTF-8 are 400 (instead of
 * being replaced by U+FFFD), and nesting deeper than `maxDepth` is 400.
 */
export function verifyJsonBody(maxDepth: number) {
  return (_req: IncomingMessage, _res: ServerResponse, body: Buffer, encoding: string): void => {
    if (!/^utf-?8$/i.test(encoding)) {
      throw new JsonBodyError(415, 'charset.unsupported', 'Unsupported charset: send JSON as UTF-8.');
    }
    if (!isUtf8(body)) {
      throw new JsonBodyError(400, 'entity.invalid.utf8', 'Malformed request body: not valid UTF-8.');
    }
    if (jsonDepthExceeds(body, maxDepth)) {
      throw new JsonBodyError(
        400,
        'entity.too.deep',
        `Request body is nested too deeply: at most ${maxDepth} levels of objects and arrays.`,
      );
    }
  };
}
