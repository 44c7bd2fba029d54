import { describe, expect, it } from '@jest/globals';
import { deflateSync, gzipSync } from 'node:zlib';
import { ApiError } from '../common/errors/api-error.js';
import { decodeCaptureBody } from './capture-body.js';

const LIMIT = 64 * 1024;
const payload = [{ event: '$snapshot', properties: { $session_id: 's1', text: 'héllo' } }];
const json = JSON.stringify(payload);
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('decodeCaptureBody', () => {
  it('reads plain JSON whatever the content type', async () => {
    for (const contentType of ['application/json', 'text/plain;charset=UTF-8', undefined]) {
      expect(await decodeCaptureBody({ bytes: Buffer.from(json), contentType }, LIMIT)).toEqual(payload);
    }
  });

  it('strips a UTF-8 byte order mark', async () => {
    expect(await decodeCaptureBody({ bytes: Buffer.from(`\ufeff${json}`) }, LIMIT)).toEqual(payload);
  });

  it.each(['gzip', 'gzip-js', 'GZIP-JS'])('gunzips with compression=%s', async (compression) => {
    const bytes = gzipSync(json);
    expect(await decodeCaptureBody({ bytes, compression, contentType: 'text/plain' }, LIMIT)).toEqual(
      payload,
    );
  });

  it.each(['gzip', 'x-gzip'])('gunzips with Content-Encoding %s', async (contentEncoding) => {
    expect(await decodeCaptureBody({ bytes: gzipSync(json), contentEncoding }, LIMIT)).toEqual(payload);
  });

  it('inflates Content-Encoding deflate', async () => {
    expect(await decodeCaptureBody({ bytes: deflateSync(json), contentEncoding: 'deflate' }, LIMIT)).toEqual(
      payload,
    );
  });

  it('recognises gzip by its magic bytes alone', async () => {
    expect(await decodeCaptureBody({ bytes: gzipSync(json), contentType: 'text/plain' }, LIMIT)).toEqual(
      payload,
    );
  });

  it('refuses another Content-Encoding with 415', async () => {
    const error = await rejection(
      decodeCaptureBody({ bytes: Buffer.from(json), contentEncoding: 'br' }, LIMIT),
    );
    expect(error.getStatus()).toBe(415);
    expect(error.code).toBe('unsupported_media_type');
  });

  it('reads a form body: JSON, base64 and base64 of gzip in data', async () => {
    const form = (data: string, extra = '') => Buffer.from(`data=${encodeURIComponent(data)}${extra}`);
    const contentType = 'application/x-www-form-urlencoded';
    expect(await decodeCaptureBody({ bytes: form(json), contentType }, LIMIT)).toEqual(payload);
    expect(
      await decodeCaptureBody({ bytes: form(b64(json)), contentType, compression: 'base64' }, LIMIT),
    ).toEqual(payload);
    expect(await decodeCaptureBody({ bytes: form(b64(gzipSync(json))), contentType }, LIMIT)).toEqual(
      payload,
    );
    expect(
      await decodeCaptureBody(
        { bytes: form(b64(gzipSync(json)), '&compression=gzip-js'), contentType },
        LIMIT,
      ),
    ).toEqual(payload);
    // A body starting with data= is a form whatever its content type (sendBeacon sends text/plain).
    expect(await decodeCaptureBody({ bytes: form(b64(json)), contentType: 'text/plain' }, LIMIT)).toEqual(
      payload,
    );
  });

  it('tolerates base64 whose + became spaces in a form', async () => {
    const data = b64(JSON.stringify([{ x: '>>>???' }]));
    expect(data).toContain('+');
    const bytes = Buffer.from(`data=${data}`); // not URL-encoded: + reads as a space
    expect(await decodeCaptureBody({ bytes }, LIMIT)).toEqual([{ x: '>>>???' }]);
  });

  it('reads an all-base64 body', async () => {
    expect(await decodeCaptureBody({ bytes: Buffer.from(b64(json)) }, LIMIT)).toEqual(payload);
    expect(await decodeCaptureBody({ bytes: Buffer.from(b64(gzipSync(json))) }, LIMIT)).toEqual(payload);
  });

  it('answers a form without data with 400 attr data', async () => {
    const error = await rejection(
      decodeCaptureBody(
        { bytes: Buffer.from('foo=1'), contentType: 'application/x-www-form-urlencoded' },
        LIMIT,
      ),
    );
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: "The form body has no 'data' field.",
      attr: 'data',
    });
  });

  it('answers an empty body with 400', async () => {
    expect((await rejection(decodeCaptureBody({ bytes: Buffer.alloc(0) }, LIMIT))).getStatus()).toBe(400);
  });

  it('answers invalid JSON with 400 parse_error', async () => {
    const error = await rejection(decodeCaptureBody({ bytes: Buffer.from('[{"event": ') }, LIMIT));
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'parse_error',
      detail: 'Malformed request body: not valid JSON.',
      attr: null,
    });
  });

  it('answers bad gzip with 400', async () => {
    const truncated = gzipSync(json).subarray(0, 20);
    for (const body of [
      { bytes: Buffer.from('not gzip at all'), compression: 'gzip-js' },
      { bytes: truncated },
      { bytes: Buffer.from(json), contentEncoding: 'gzip' },
    ]) {
      const error = await rejection(decodeCaptureBody(body, LIMIT));
      expect(error.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'The request body is not valid gzip data.',
        attr: null,
      });
    }
  });

  it('answers a gzip bomb with 413 without inflating it beyond the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(LIMIT);
    const error = await rejection(decodeCaptureBody({ bytes: bomb, compression: 'gzip-js' }, LIMIT));
    expect(error.getStatus()).toBe(413);
    expect(error.code).toBe('payload_too_large');
    // The same inside base64 in a form.
    const form = Buffer.from(`data=${encodeURIComponent(b64(gzipSync(Buffer.alloc(1024 * 1024, 0x20))))}`);
    expect((await rejection(decodeCaptureBody({ bytes: form }, LIMIT))).getStatus()).toBe(413);
  });

  it('accepts a decompressed body of exactly the limit', async () => {
    const text = JSON.stringify(['x'.repeat(LIMIT - 4)]);
    expect(Buffer.byteLength(text)).toBe(LIMIT);
    expect(await decodeCaptureBody({ bytes: gzipSync(text) }, LIMIT)).toEqual(['x'.repeat(LIMIT - 4)]);
  });
});
