/**
 * Decoding of the bodies the browser SDK posts to `/flags` and `/decide`, in every encoding its versions use
 * (posthog-js `lib/src/request.js`, `encodePostData`): plain JSON (`application/json`); gzip (`gzip-js`:
 * `text/plain` body, `?compression=gzip-js`; native `gzip`, or a `Content-Encoding: gzip` header); base64 in
 * a form field (`data=<base64>`, `application/x-www-form-urlencoded`, `?compression=base64`, the encoding of
 * `/decide` in older versions); or a bare base64 body.
 */
import { gunzipSync } from 'node:zlib';
import { ApiError } from '../common/errors/api-error.js';

export interface EncodedBody {
  raw: Buffer;
  /** The `compression` query parameter. */
  compression?: string;
  contentType?: string;
  contentEncoding?: string;
  /** Largest accepted decompressed size, in bytes. */
  limit: number;
}

const malformed = (why: string) =>
  ApiError.validation(`Malformed request data: ${why}.`, null, 'parse_error');

function isGzip(body: EncodedBody): boolean {
  const c = body.compression?.toLowerCase();
  if (c === 'gzip' || c === 'gzip-js') return true;
  if (body.contentEncoding?.toLowerCase().trim() === 'gzip') return true;
  return body.raw.length >= 2 && body.raw[0] === 0x1f && body.raw[1] === 0x8b;
}

function gunzip(raw: Buffer, limit: number): Buffer {
  try {
    return gunzipSync(raw, { maxOutputLength: limit });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ApiError(413, 'payload_too_large', 'The decompressed request body is too large.');
    }
    throw malformed('the body is not valid gzip');
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw malformed('the body is not valid JSON');
  }
}

/** A JSON document, either as is or base64-encoded (standard or URL-safe alphabet). */
function parseJsonOrBase64(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed) throw malformed('the body is empty');
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) return parseJson(trimmed);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw malformed('the body is neither JSON nor base64');
  return parseJson(Buffer.from(trimmed, 'base64').toString('utf8'));
}

/** The JSON payload of a body in any of the SDK's encodings; 400 `parse_error` when it is none of them. */
export function decodeSdkBody(body: EncodedBody): unknown {
  const bytes = isGzip(body) ? gunzip(body.raw, body.limit) : body.raw;
  const text = bytes.toString('utf8');
  const type = body.contentType?.split(';')[0].trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded' || /^data=/.test(text)) {
    const data = new URLSearchParams(text).get('data');
    if (data === null) throw malformed("the form has no 'data' field");
    return parseJsonOrBase64(data);
  }
  return parseJsonOrBase64(text);
}

/**
 * The project token of a decoded payload: `token`, else `api_key`, else `$token` (the names SDK versions
 * used), else the `token` query parameter. Null when there is none.
 */
export function tokenOf(payload: unknown, queryToken?: unknown): string | null {
  if (payload && typeof payload === 'object' && !Array.isArray(payload)) {
    const p = payload as Record<string, unknown>;
    for (const key of ['token', 'api_key', '$token']) {
      if (typeof p[key] === 'string' && p[key]) return p[key];
    }
  }
  return typeof queryToken === 'string' && queryToken ? queryToken : null;
}
