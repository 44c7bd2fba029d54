/**
 * Decoding of capture request bodies (decisions §11), the way PostHog's SDKs send them:
 *
 * - plain JSON (`application/json`, or `text/plain` from `sendBeacon`);
 * - gzip, recognised from the `compression` query or form parameter (`gzip`, `gzip-js`), a `Content-Encoding`
 *   header (`gzip`, `x-gzip`; `deflate` too), or the gzip magic bytes `1f 8b` with no hint at all;
 * - a form body (`application/x-www-form-urlencoded`, or a body starting with `data=`) whose `data` field holds
 *   the JSON, base64 of it (`compression=base64`), or base64 of gzip;
 * - a body that is all base64.
 *
 * Every decompression is bounded by the same byte limit as the body itself, so a small gzip bomb is a 413, not
 * an out-of-memory.
 */
import { promisify } from 'node:util';
import { gunzip, inflate, type InputType, type ZlibOptions } from 'node:zlib';
import { ApiError } from '../common/errors/api-error.js';

const gunzipAsync = promisify<InputType, ZlibOptions, Buffer>(gunzip);
const inflateAsync = promisify<InputType, ZlibOptions, Buffer>(inflate);

export interface CaptureBody {
  /** The raw request body. */
  bytes: Buffer;
  contentType?: string;
  contentEncoding?: string;
  /** The `compression` query parameter. */
  compression?: string;
}

const GZIP_HINTS = new Set(['gzip', 'gzip-js']);
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

export function isGzip(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

async function decompress(kind: 'gzip' | 'deflate', bytes: Buffer, limit: number): Promise<Buffer> {
  try {
    return await (kind === 'gzip' ? gunzipAsync : inflateAsync)(bytes, { maxOutputLength: limit });
  } catch (error) {
    const e = error as { code?: string };
    if (e.code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError)
      throw ApiError.payloadTooLarge(limit, true);
    throw ApiError.validation(
      kind === 'gzip'
        ? 'The request body is not valid gzip data.'
        : 'The request body is not valid deflate data.',
      null,
      'invalid_input',
    );
  }
}

/** Applies the `Content-Encoding` header (outermost last in the header, so undone first). */
async function undoContentEncoding(
  bytes: Buffer,
  header: string | undefined,
  limit: number,
): Promise<Buffer> {
  const codings = (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  let out = bytes;
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') out = await decompress('gzip', out, limit);
    else if (coding === 'deflate') out = await decompress('deflate', out, limit);
    else
      throw new ApiError(
        415,
        'unsupported_media_type',
        `Unsupported Content-Encoding '${coding}': send gzip, deflate or identity.`,
      );
  }
  return out;
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

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw ApiError.validation('Malformed request body: not valid JSON.', null, 'parse_error');
  }
}

/**
 * The JSON text of a value that may be JSON, base64 of JSON, or base64 of gzip (`compression` says which when
 * the client said so).
 */
async function textOf(value: string, compression: string | undefined, limit: number): Promise<string> {
  if (compression && GZIP_HINTS.has(compression) && !looksLikeJson(value)) {
    const bytes = fromBase64(value);
    if (!bytes) throw ApiError.validation('The data field is not base64-encoded gzip.', 'data');
    return utf8(await decompress('gzip', bytes, limit));
  }
  if (looksLikeJson(value) || isJson(value)) return value;
  const bytes = fromBase64(value);
  if (!bytes) return value; // not base64 either: let JSON.parse say what is wrong
  if (isGzip(bytes)) return utf8(await decompress('gzip', bytes, limit));
  if (bytes.length > limit) throw ApiError.payloadTooLarge(limit, true);
  return utf8(bytes);
}

function isForm(contentType: string | undefined, text: string): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/x-www-form-urlencoded' || /^\s*data=/.test(text);
}

/** Decodes a capture body into its JSON value; throws 400 (bad encoding or JSON), 413 or 415 as ApiError. */
export async function decodeCaptureBody(body: CaptureBody, limit: number): Promise<unknown> {
  if (!body.bytes.length) throw ApiError.validation('The request body is empty.', null, 'required');
  let bytes = await undoContentEncoding(body.bytes, body.contentEncoding, limit);
  const compression = body.compression?.trim().toLowerCase();
  if ((compression && GZIP_HINTS.has(compression)) || isGzip(bytes)) {
    bytes = await decompress('gzip', bytes, limit);
  }
  const text = utf8(bytes);
  if (isForm(body.contentType, text)) {
    const form = new URLSearchParams(text);
    const data = form.get('data');
    if (data === null || data === '') {
      throw ApiError.validation("The form body has no 'data' field.", 'data', 'required');
    }
    const formCompression = form.get('compression')?.trim().toLowerCase() ?? undefined;
    return parseJson(await textOf(data, formCompression, limit));
  }
  return parseJson(await textOf(text, undefined, limit));
}
