/**
 * Decoding of capture request bodies (docs/decisions.md §11), the way PostHog's SDKs send them:
 *
 * - plain JSON (`application/json`, or `text/plain` from `sendBeacon`);
 * - gzip, recognised from the `compression` query or form parameter (`gzip`, `gzip-js`), a `Content-Encoding`
 *   header (`gzip`, `x-gzip`; `deflate` too), or the gzip magic bytes `1f 8b` with no hint at all;
 * - a form body (`application/x-www-form-urlencoded`, or a body starting with `data=`) whose `data` field holds
 *   the JSON, base64 of it (`compression=base64`), base64 of gzip, or LZ-string's base64 form
 *   (`compression=lz64`, in the form or the query: `lz-string.ts`, its output bounded by the byte limit);
 * - a body that is all base64.
 *
 * The work is bounded whatever the client sends: decompression streams, and the decoded JSON is parsed as it
 * comes out of the decompressor by `BoundedJsonParser`, which stops at the first exceeded limit (decoded bytes,
 * depth, values, events, rrweb events per `$snapshot`). So a small gzip bomb is a 413 after a few kilobytes of
 * output, not an out-of-memory. The parse gives the event loop back every few milliseconds (`Yielder`).
 */
import { pipeline, Readable } from 'node:stream';
import { createGunzip, createInflate, gunzipSync } from 'node:zlib';
import { ApiError } from '../common/errors/api-error.js';
import { Yielder } from '../common/time/yielder.js';
import { BoundedJsonParser, type JsonHooks, type JsonLimits, valuesWithinLimits } from './bounded-json.js';
import { markWithoutBadText } from './capture-text.js';
import { lz64Data } from './lz-string.js';

export interface CaptureBody {
  /** The raw request body, whole. */
  bytes?: Buffer;
  /**
   * Or the raw request body as it arrives (bounded by its reader): read into the decoder chunk by chunk, so
   * that only what the decoder keeps is held, and accounted for (`DecodeHooks.onHeld`).
   */
  stream?: AsyncIterable<Buffer>;
  contentType?: string;
  contentEncoding?: string;
  /** The `compression` query parameter. */
  compression?: string;
}

/** How much of the body has been decoded so far. */
export interface DecodeProgress {
  /** Decoded bytes read. */
  byteCount: number;
  /** JSON values built. */
  values: number;
}

export interface DecodeHooks extends JsonHooks {
  /**
   * Called after each slice of parsing (a few tens of kilobytes), and awaited before the next: may wait (the
   * memory budget), or throw or reject to stop.
   */
  onSlice?(progress: DecodeProgress): void | Promise<void>;
  /**
   * Called when the decoder starts (`bytes` > 0) or stops (`bytes` < 0) holding bytes of the body outside the
   * parser: received bytes it collects (a small body read whole, a form or base64 body) and every copy it makes
   * of them while decoding (the joined bytes, their text, the form field, the base64 decoded). Awaited before
   * the decoder goes on: may wait (the memory budget), or throw or reject to stop.
   */
  onHeld?(bytes: number): void | Promise<void>;
}

/** Bytes handed to the parser at a time: small enough that one slice takes a few milliseconds. */
const SLICE_BYTES = 16 * 1024;

/**
 * Decoded JSON bodies up to this size are parsed by `JSON.parse` (native, several times faster than the
 * streaming parser) and then checked against the limits, which a body this small can exceed only in values it
 * already holds (at most half as many values as bytes, a few megabytes of memory); larger bodies, and any body
 * that exceeds a limit, go through the streaming parser, which stops at the limit and says which.
 */
const WHOLE_PARSE_BYTES = 128 * 1024;

const GZIP_HINTS = new Set(['gzip', 'gzip-js']);
/** LZ-string's base64 form (`compressToBase64`), as older posthog-js versions send it; PostHog's names for it. */
const LZ64_HINTS = new Set(['lz64', 'lz-string']);
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

export function isGzip(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

const invalidCompressed = (kind: 'gzip' | 'deflate') =>
  ApiError.validation(
    kind === 'gzip'
      ? 'The request body is not valid gzip data.'
      : 'The request body is not valid deflate data.',
    null,
    'invalid_input',
  );

/**
 * The decompressed bytes of `input` (whole, or as it arrives), chunk by chunk, at most `limit` of them (413
 * beyond). An error of the input's own (its reader's 413) is passed on as it is.
 */
async function* decompressed(
  kind: 'gzip' | 'deflate',
  input: Buffer | AsyncIterable<Buffer>,
  limit: number,
): AsyncGenerator<Buffer> {
  const options = { chunkSize: 64 * 1024 };
  const inflater = kind === 'gzip' ? createGunzip(options) : createInflate(options);
  inflater.on('error', () => undefined);
  let stream: Readable = inflater;
  if (Buffer.isBuffer(input)) inflater.end(input);
  else stream = pipeline(Readable.from(input, { objectMode: false }), inflater, () => undefined);
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) throw ApiError.payloadTooLarge(limit, true);
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw invalidCompressed(kind);
  } finally {
    stream.destroy();
  }
}

/** The codings of a `Content-Encoding` header, in the order they were applied (415 for an unknown one). */
function contentCodings(header: string | undefined): ('gzip' | 'deflate')[] {
  return (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity')
    .map((coding) => {
      if (coding === 'gzip' || coding === 'x-gzip') return 'gzip';
      if (coding === 'deflate') return 'deflate';
      throw new ApiError(
        415,
        'unsupported_media_type',
        `Unsupported Content-Encoding '${coding}': send gzip, deflate or identity.`,
      );
    });
}

/** `head`, then the rest of `iterator`. */
async function* prepended(head: Buffer[], iterator: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  while (head.length) yield head.shift() as Buffer;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return;
    yield next.value;
  }
}

/** The first `n` bytes of `source` (fewer if it is shorter), and all of it again from the start. */
async function peek(
  source: AsyncIterable<Buffer>,
  n: number,
): Promise<{ first: Buffer; all: AsyncIterable<Buffer> }> {
  const iterator = source[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  while (size < n) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    size += next.value.length;
  }
  const first = (head.length === 1 ? head[0] : Buffer.concat(head)).subarray(0, n);
  return { first, all: prepended(head, iterator) };
}

function utf8(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '[' || first === '{';
}

/** Base64 (standard or URL-safe, white space and `+`-turned-space tolerated) to bytes, or null when it is not. */
function fromBase64(text: string): Buffer | null {
  const compact = text.trim().replace(/ /g, '+').replace(/\s+/g, '');
  if (!compact || !BASE64.test(compact)) return null;
  return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
}

/**
 * The JSON value of a text that does not start with `[` or `{`: only a scalar (number, string, literal),
 * which `JSON.parse` reads in linear time without building any structure. Undefined when it is not JSON.
 */
function scalarJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

function isForm(contentType: string | undefined, text: string): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/x-www-form-urlencoded' || /^\s*data=/.test(text);
}

function isFormType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0].trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** The first byte that is not white space (or a byte order mark at the very start); -1 when there is none. */
function firstSignificant(chunk: Buffer, atStart: boolean): number {
  let i = atStart && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
  for (; i < chunk.length; i++) {
    const c = chunk[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  }
  return -1;
}

async function* chunksOf(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

/** A body parsed at once, and how much of it there was. */
interface WholeBody {
  value: unknown;
  progress: DecodeProgress;
}

class BodyDecoder {
  constructor(
    private readonly body: CaptureBody,
    private readonly limits: JsonLimits,
    private readonly hooks: DecodeHooks,
  ) {}

  private get limit(): number {
    return this.limits.maxBytes;
  }

  /** Holds `bytes` more (or fewer) bytes of the body outside the parser, as the hook allows. */
  private async hold(bytes: number): Promise<void> {
    if (bytes) await this.hooks.onHeld?.(bytes);
  }

  /** `lz64` when the query's `compression` names LZ-string (the body, or its `data` field, is then its base64). */
  private lz64Query(): string | undefined {
    const compression = this.body.compression?.trim().toLowerCase();
    return compression && LZ64_HINTS.has(compression) ? 'lz64' : undefined;
  }

  private get gzipHinted(): boolean {
    const compression = this.body.compression?.trim().toLowerCase();
    return !!compression && GZIP_HINTS.has(compression);
  }

  async decode(): Promise<unknown> {
    const { body } = this;
    if (body.stream) return this.decodeStream(body.stream);
    return this.decodeBytes(body.bytes ?? Buffer.alloc(0));
  }

  /** A body read whole. */
  private async decodeBytes(bytes: Buffer): Promise<unknown> {
    if (!bytes.length) throw ApiError.validation('The request body is empty.', null, 'required');
    if (contentCodings(this.body.contentEncoding).length) return this.decodeSource(chunksOf(bytes));
    if (this.gzipHinted || isGzip(bytes)) {
      const small = this.smallGzipJson(bytes);
      if (small) return this.accept(small);
      return this.consume(decompressed('gzip', bytes, this.limit), false);
    }
    return this.consume(chunksOf(bytes), false);
  }

  /**
   * A body as it arrives: a small one (`WHOLE_PARSE_BYTES`, what posthog-js sends) is read whole and decoded
   * as such; a larger one is decoded as it arrives, so that only what the decoder keeps is held.
   */
  private async decodeStream(stream: AsyncIterable<Buffer>): Promise<unknown> {
    const iterator = stream[Symbol.asyncIterator]();
    const head: Buffer[] = [];
    let size = 0;
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        const bytes = head.length === 1 ? head[0] : Buffer.concat(head, size);
        head.length = 0;
        return this.decodeBytes(bytes);
      }
      head.push(next.value);
      size += next.value.length;
      await this.hold(next.value.length);
      if (size > WHOLE_PARSE_BYTES) break;
    }
    if (!size) throw ApiError.validation('The request body is empty.', null, 'required');
    return this.decodeSource(prepended(head, iterator));
  }

  /** The general path: Content-Encoding undone and gzip inflated as the bytes come. */
  private async decodeSource(raw: AsyncIterable<Buffer>): Promise<unknown> {
    let source = raw;
    for (const coding of contentCodings(this.body.contentEncoding).reverse()) {
      source = decompressed(coding, source, this.limit);
    }
    const { first, all } = await peek(source, 2);
    if (!first.length) throw ApiError.validation('The request body is empty.', null, 'required');
    if (this.gzipHinted || isGzip(first)) return this.consume(decompressed('gzip', all, this.limit), false);
    return this.consume(all, false);
  }

  /**
   * Reads decoded bytes: JSON (starting with `[` or `{`, and not declared a form) is parsed as it streams;
   * anything else (a form, base64) is collected, bounded by the byte limit, and decoded further. With
   * `jsonOnly` (the content of a form or base64 field), whatever it is goes to the parser.
   */
  private async consume(chunks: AsyncIterable<Buffer>, jsonOnly: boolean): Promise<unknown> {
    const iterator = chunks[Symbol.asyncIterator]();
    const head: Buffer[] = [];
    let first = -1;
    let received = 0;
    while (first < 0) {
      const next = await iterator.next();
      if (next.done) break;
      head.push(next.value);
      received += next.value.length;
      if (received > this.limit) throw ApiError.payloadTooLarge(this.limit, true);
      await this.hold(next.value.length);
      first = firstSignificant(next.value, head.length === 1);
    }
    const rest: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: () => iterator };
    if (jsonOnly || ((first === 0x5b || first === 0x7b) && !isFormType(this.body.contentType))) {
      return this.parse(head, rest);
    }
    // A form or base64: collected (every byte and copy held counted), then decoded further.
    for await (const chunk of rest) {
      received += chunk.length;
      if (received > this.limit) throw ApiError.payloadTooLarge(this.limit, true);
      head.push(chunk);
      await this.hold(chunk.length);
    }
    const { value, compression } = await this.textOf(head, received);
    return this.fromText(value, compression ?? this.lz64Query());
  }

  /**
   * The text of a collected body: the `data` field of a form, else the whole text. Leaves only that text held
   * (2 bytes per character at most); the chunks, their joined copy and the form's other fields are let go of.
   */
  private async textOf(
    chunks: Buffer[],
    received: number,
  ): Promise<{ value: string; compression: string | undefined }> {
    await this.hold(received);
    const joined = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
    chunks.length = 0;
    const text = utf8(joined);
    await this.hold(2 * text.length - received);
    if (!isForm(this.body.contentType, text)) {
      await this.hold(-received);
      return { value: text, compression: undefined };
    }
    const form = new URLSearchParams(text);
    const data = form.get('data');
    if (data === null || data === '') {
      throw ApiError.validation("The form body has no 'data' field.", 'data', 'required');
    }
    const compression = form.get('compression')?.trim().toLowerCase() ?? undefined;
    // The parsed fields hold about the text again while `data` is taken; then only `data` is kept.
    await this.hold(2 * text.length);
    await this.hold(2 * data.length - 4 * text.length - received);
    return { value: data, compression };
  }

  /**
   * A text that is JSON, base64 of JSON, or base64 of gzip (`compression` says which when the client said so).
   * The text is held (`textOf`): the copies made of it are accounted for.
   */
  private async fromText(value: string, compression: string | undefined): Promise<unknown> {
    if (compression && LZ64_HINTS.has(compression) && !looksLikeJson(value)) return this.fromLz64(value);
    const gzipHinted = !!compression && GZIP_HINTS.has(compression);
    const json = looksLikeJson(value);
    if (json && !gzipHinted) return this.parseText(value);
    if (!json && !gzipHinted) {
      const scalar = scalarJson(value);
      if (scalar) return scalar.value;
    }
    const bytes = await this.fromBase64Held(value);
    if (gzipHinted && !json) {
      if (!bytes) throw ApiError.validation('The data field is not base64-encoded gzip.', 'data');
      return this.consume(decompressed('gzip', bytes, this.limit), true);
    }
    // Neither JSON nor base64: the parser says what is wrong.
    if (!bytes) return this.parseText(value);
    if (isGzip(bytes)) return this.consume(decompressed('gzip', bytes, this.limit), true);
    if (bytes.length > this.limit) throw ApiError.payloadTooLarge(this.limit, true);
    return this.parse([bytes], chunksOf(Buffer.alloc(0)));
  }

  /** LZ-string's base64 form decompressed (`lz64Data`), then parsed; its dictionary and pieces held meanwhile. */
  private async fromLz64(value: string): Promise<unknown> {
    const text = lz64Data(value, this.limit);
    await this.hold(6 * text.length);
    const parsed = await this.parseText(text);
    await this.hold(-6 * text.length);
    return parsed;
  }

  /** Parses a text (its bytes held as well). */
  private async parseText(value: string): Promise<unknown> {
    const bytes = Buffer.from(value);
    await this.hold(bytes.length);
    return this.parse([bytes], chunksOf(Buffer.alloc(0)));
  }

  /** `fromBase64`, accounting for its copies: the compacted text while it is made, then the decoded bytes. */
  private async fromBase64Held(value: string): Promise<Buffer | null> {
    await this.hold(4 * value.length);
    const bytes = fromBase64(value);
    await this.hold((bytes?.length ?? 0) - 4 * value.length);
    return bytes;
  }

  /**
   * Parses the chunks: a small body at once (`WHOLE_PARSE_BYTES`), else in small slices, giving the event loop
   * back between them.
   */
  private async parse(head: Buffer[], rest: AsyncIterable<Buffer>): Promise<unknown> {
    const iterator = rest[Symbol.asyncIterator]();
    let size = head.reduce((n, c) => n + c.length, 0);
    let ended = false;
    while (size <= WHOLE_PARSE_BYTES) {
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        break;
      }
      head.push(next.value);
      size += next.value.length;
    }
    if (ended) {
      const whole = this.parseWhole(head.length === 1 ? head[0] : Buffer.concat(head));
      if (whole) return this.accept(whole);
    }
    return this.parseStreaming(head, { [Symbol.asyncIterator]: () => iterator });
  }

  /**
   * The common case at once: gzip that inflates to a small JSON body (what posthog-js sends), inflated in one
   * call bounded to `WHOLE_PARSE_BYTES` and parsed whole. Undefined for anything else (larger, not JSON, a form,
   * corrupt), which then takes the general path and gets its exact answer there.
   */
  private smallGzipJson(bytes: Buffer): WholeBody | undefined {
    if (bytes.length > WHOLE_PARSE_BYTES || isFormType(this.body.contentType)) return undefined;
    let inflated: Buffer;
    try {
      inflated = gunzipSync(bytes, { maxOutputLength: Math.min(WHOLE_PARSE_BYTES, this.limit) });
    } catch {
      return undefined;
    }
    const first = firstSignificant(inflated, true);
    if (first !== 0x5b && first !== 0x7b) return undefined;
    return this.parseWhole(inflated);
  }

  /**
   * A small body parsed by `JSON.parse`, when it is valid JSON within the limits; undefined otherwise (the
   * streaming parser then reads it and reports the exact error).
   */
  private parseWhole(bytes: Buffer): WholeBody | undefined {
    if (bytes.length > this.limits.maxBytes) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(utf8(bytes));
    } catch {
      return undefined;
    }
    const values = valuesWithinLimits(value, this.limits);
    if (values < 0) return undefined;
    markWithoutBadText(value, bytes);
    const { onFirstEvent } = this.hooks;
    if (onFirstEvent) {
      const batchRoot =
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : null;
      const events = batchRoot ? batchRoot.batch : value;
      if (Array.isArray(events) && events.length) onFirstEvent(events[0], batchRoot);
    }
    return { value, progress: { byteCount: bytes.length, values } };
  }

  /** A body parsed whole, once the slice hook (the memory budget) has taken it. */
  private async accept(whole: WholeBody): Promise<unknown> {
    await this.hooks.onSlice?.(whole.progress);
    return whole.value;
  }

  private async parseStreaming(head: Buffer[], rest: AsyncIterable<Buffer>): Promise<unknown> {
    const parser = new BoundedJsonParser(this.limits, this.hooks);
    const yielder = new Yielder();
    const feed = async (chunk: Buffer) => {
      for (let offset = 0; offset < chunk.length; offset += SLICE_BYTES) {
        parser.write(chunk.subarray(offset, offset + SLICE_BYTES));
        await this.hooks.onSlice?.(parser);
        await yielder.tick();
      }
    };
    for (const chunk of head) await feed(chunk);
    for await (const chunk of rest) await feed(chunk);
    return parser.end();
  }
}

/**
 * Decodes a capture body into its JSON value within `limits`; throws 400 (bad encoding or JSON, too deep),
 * 413 (too many bytes, values or events) or 415 as ApiError, or what a hook throws.
 */
export function decodeCaptureBody(
  body: CaptureBody,
  limits: JsonLimits,
  hooks: DecodeHooks = {},
): Promise<unknown> {
  return new BodyDecoder(body, limits, hooks).decode();
}
