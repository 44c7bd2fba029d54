import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { deflateSync, gzipSync } from 'node:zlib';
import { ApiError } from '../common/errors/api-error.js';
import { decodeCaptureBody } from './capture-body.js';
import { isMarkedWithoutBadText } from './capture-text.js';

const LIMIT = 64 * 1024;
const LIMITS = { maxBytes: LIMIT, maxDepth: 100, maxValues: 100_000 };
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
      expect(await decodeCaptureBody({ bytes: Buffer.from(json), contentType }, LIMITS)).toEqual(payload);
    }
  });

  it('marks a body without any \\u escape as free of bad text, and only such a body', async () => {
    const decode = (text: string) =>
      decodeCaptureBody({ bytes: gzipSync(text), compression: 'gzip-js' }, LIMITS);
    expect(isMarkedWithoutBadText(await decode(json))).toBe(true);
    // Invalid UTF-8 (a surrogate's bytes) decodes to U+FFFD, which can be stored.
    const surrogateBytes = Buffer.concat([
      Buffer.from('[{"a":"'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}]'),
    ]);
    const decoded = await decodeCaptureBody({ bytes: surrogateBytes }, LIMITS);
    expect(decoded).toEqual([{ a: '\ufffd\ufffd\ufffd' }]);
    expect(isMarkedWithoutBadText(decoded)).toBe(true);
    for (const text of ['[{"a":"x\\u0000"}]', '[{"a\\ud800":1}]', '[{"a":"\\u00e9"}]', '[{"a":"\\\\u"}]']) {
      const value = await decode(text);
      expect(isMarkedWithoutBadText(value)).toBe(false);
    }
    expect(await decode('[{"a":"x\\u0000"}]')).toEqual([{ a: 'x\u0000' }]);
  });

  it('strips a UTF-8 byte order mark', async () => {
    expect(await decodeCaptureBody({ bytes: Buffer.from(`\ufeff${json}`) }, LIMITS)).toEqual(payload);
  });

  it.each(['gzip', 'gzip-js', 'GZIP-JS'])('gunzips with compression=%s', async (compression) => {
    const bytes = gzipSync(json);
    expect(await decodeCaptureBody({ bytes, compression, contentType: 'text/plain' }, LIMITS)).toEqual(
      payload,
    );
  });

  it.each(['gzip', 'x-gzip'])('gunzips with Content-Encoding %s', async (contentEncoding) => {
    expect(await decodeCaptureBody({ bytes: gzipSync(json), contentEncoding }, LIMITS)).toEqual(payload);
  });

  it('inflates Content-Encoding deflate', async () => {
    expect(await decodeCaptureBody({ bytes: deflateSync(json), contentEncoding: 'deflate' }, LIMITS)).toEqual(
      payload,
    );
  });

  it('recognises gzip by its magic bytes alone', async () => {
    expect(await decodeCaptureBody({ bytes: gzipSync(json), contentType: 'text/plain' }, LIMITS)).toEqual(
      payload,
    );
  });

  it('refuses another Content-Encoding with 415', async () => {
    const error = await rejection(
      decodeCaptureBody({ bytes: Buffer.from(json), contentEncoding: 'br' }, LIMITS),
    );
    expect(error.getStatus()).toBe(415);
    expect(error.code).toBe('unsupported_media_type');
  });

  it('reads a form body: JSON, base64 and base64 of gzip in data', async () => {
    const form = (data: string, extra = '') => Buffer.from(`data=${encodeURIComponent(data)}${extra}`);
    const contentType = 'application/x-www-form-urlencoded';
    expect(await decodeCaptureBody({ bytes: form(json), contentType }, LIMITS)).toEqual(payload);
    expect(
      await decodeCaptureBody({ bytes: form(b64(json)), contentType, compression: 'base64' }, LIMITS),
    ).toEqual(payload);
    expect(await decodeCaptureBody({ bytes: form(b64(gzipSync(json))), contentType }, LIMITS)).toEqual(
      payload,
    );
    expect(
      await decodeCaptureBody(
        { bytes: form(b64(gzipSync(json)), '&compression=gzip-js'), contentType },
        LIMITS,
      ),
    ).toEqual(payload);
    // A body starting with data= is a form whatever its content type (sendBeacon sends text/plain).
    expect(await decodeCaptureBody({ bytes: form(b64(json)), contentType: 'text/plain' }, LIMITS)).toEqual(
      payload,
    );
  });

  it('tolerates base64 whose + became spaces in a form', async () => {
    const data = b64(JSON.stringify([{ x: '>>>???' }]));
    expect(data).toContain('+');
    const bytes = Buffer.from(`data=${data}`); // not URL-encoded: + reads as a space
    expect(await decodeCaptureBody({ bytes }, LIMITS)).toEqual([{ x: '>>>???' }]);
  });

  it('reads an all-base64 body', async () => {
    expect(await decodeCaptureBody({ bytes: Buffer.from(b64(json)) }, LIMITS)).toEqual(payload);
    expect(await decodeCaptureBody({ bytes: Buffer.from(b64(gzipSync(json))) }, LIMITS)).toEqual(payload);
  });

  it('answers a form without data with 400 attr data', async () => {
    const error = await rejection(
      decodeCaptureBody(
        { bytes: Buffer.from('foo=1'), contentType: 'application/x-www-form-urlencoded' },
        LIMITS,
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
    expect((await rejection(decodeCaptureBody({ bytes: Buffer.alloc(0) }, LIMITS))).getStatus()).toBe(400);
  });

  it('answers invalid JSON with 400 parse_error', async () => {
    const error = await rejection(decodeCaptureBody({ bytes: Buffer.from('[{"event": ') }, LIMITS));
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
      const error = await rejection(decodeCaptureBody(body, LIMITS));
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
    const error = await rejection(decodeCaptureBody({ bytes: bomb, compression: 'gzip-js' }, LIMITS));
    expect(error.getStatus()).toBe(413);
    expect(error.code).toBe('payload_too_large');
    // The same inside base64 in a form.
    const form = Buffer.from(`data=${encodeURIComponent(b64(gzipSync(Buffer.alloc(1024 * 1024, 0x20))))}`);
    expect((await rejection(decodeCaptureBody({ bytes: form }, LIMITS))).getStatus()).toBe(413);
  });

  it('accepts a decompressed body of exactly the limit', async () => {
    const text = JSON.stringify(['x'.repeat(LIMIT - 4)]);
    expect(Buffer.byteLength(text)).toBe(LIMIT);
    expect(await decodeCaptureBody({ bytes: gzipSync(text) }, LIMITS)).toEqual(['x'.repeat(LIMIT - 4)]);
  });

  it('stops the [{},{},…] bomb at the events limit after a few kilobytes of output', async () => {
    // 8.4 million empty objects: about 25 MB of JSON in about 24 KB of gzip.
    const bomb = gzipSync(`[${'{},'.repeat(8_400_000)}{}]`, { level: 9 });
    expect(bomb.length).toBeLessThan(40 * 1024);
    const limits = { maxBytes: 25 * 1024 * 1024, maxDepth: 1000, maxValues: 1_000_000, maxEvents: 1000 };
    let slices = 0;
    let values = 0;
    const error = await rejection(
      decodeCaptureBody({ bytes: bomb, compression: 'gzip-js' }, limits, {
        onSlice: (parser) => {
          slices++;
          values = parser.values;
        },
      }),
    );
    expect(error.body).toEqual({
      type: 'invalid_request',
      code: 'payload_too_large',
      detail: 'Too many events in one request: at most 1000.',
      attr: null,
    });
    // The first 16 KB slice already holds more than 1000 events: nothing after it was decoded.
    expect(slices).toBe(0);
    expect(values).toBe(0);
  });

  it('stops the same bomb at the values limit when it hides inside one event', async () => {
    const bomb = gzipSync(`{"properties":{"x":[${'{},'.repeat(2_000_000)}{}]}}`);
    const limits = { maxBytes: 25 * 1024 * 1024, maxDepth: 1000, maxValues: 50_000 };
    let decoded = 0;
    const error = await rejection(
      decodeCaptureBody({ bytes: bomb }, limits, { onSlice: (parser) => void (decoded = parser.byteCount) }),
    );
    expect(error.detail).toBe('Request body has too many JSON values: at most 50000.');
    expect(decoded).toBeLessThan(200 * 1024);
  });

  it('answers JSON nested deeper than the limit with 400, also inside base64 in a form', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const limits = { ...LIMITS, maxDepth: 64 };
    for (const body of [
      { bytes: Buffer.from(deep) },
      { bytes: gzipSync(deep), compression: 'gzip-js' },
      { bytes: Buffer.from(`data=${encodeURIComponent(b64(gzipSync(deep)))}`) },
    ]) {
      const error = await rejection(decodeCaptureBody(body, limits));
      expect(error.getStatus()).toBe(400);
      expect(error.detail).toBe(
        'The request body is nested too deeply: at most 64 levels of arrays and objects.',
      );
    }
  });

  it('gives the event loop back while parsing a large body', async () => {
    const text = JSON.stringify(
      Array.from({ length: 60_000 }, (_, i) => ({ type: 3, timestamp: i, data: { source: 1, x: i, y: i } })),
    );
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const value = (await decodeCaptureBody(
        { bytes: gzipSync(text), compression: 'gzip-js' },
        { maxBytes: 25 * 1024 * 1024, maxDepth: 100, maxValues: 1e7 },
      )) as unknown[];
      expect(value).toHaveLength(60_000);
    } finally {
      clearInterval(timer);
    }
    // A parse that held the loop throughout would let no timer fire.
    expect(ticks).toBeGreaterThan(2);
  });
});

describe('decodeCaptureBody: small bodies parsed at once, large ones streamed, the same answers', () => {
  const limits = {
    maxBytes: 1024 * 1024,
    maxDepth: 10,
    maxValues: 50_000,
    maxEvents: 3,
    maxSnapshotEvents: 4,
  };
  const event = (n: number) => ({ event: '$snapshot', properties: { $snapshot_data: Array(n).fill(0) } });
  /** The same events, padded past the whole-parse size with a long string so they are streamed. */
  const padded = (body: unknown[]) => [
    ...body.slice(0, -1),
    { ...(body.at(-1) as object), pad: 'x'.repeat(200_000) },
  ];

  async function outcome(body: unknown): Promise<unknown> {
    try {
      return {
        value: await decodeCaptureBody(
          { bytes: gzipSync(JSON.stringify(body)), compression: 'gzip-js' },
          limits,
        ),
      };
    } catch (error) {
      const e = error as ApiError;
      return { status: e.getStatus(), detail: (e.getResponse() as { detail: string }).detail };
    }
  }

  it.each([
    [
      'too many events',
      [event(1), event(1), event(1), event(1)],
      413,
      'Too many events in one request: at most 3.',
    ],
    [
      'too many rrweb events in one $snapshot',
      [event(5)],
      413,
      'Too many rrweb events in one $snapshot event: at most 4.',
    ],
    [
      'nested too deeply',
      [{ a: [[[[[[[[[[1]]]]]]]]]] }],
      400,
      'The request body is nested too deeply: at most 10 levels of arrays and objects.',
    ],
  ])('%s: the same error either way', async (_name, body, status, detail) => {
    expect(await outcome(body)).toEqual({ status, detail });
    expect(await outcome(padded(body))).toEqual({ status, detail });
  });

  it('too many values: 413 either way', async () => {
    const body = [{ properties: { $snapshot_data: [], many: Array(60_000).fill(1) } }];
    expect(await outcome(body)).toMatchObject({ status: 413 });
    expect(await outcome(padded(body))).toMatchObject({ status: 413 });
  });

  it('within the limits: the value, the first event and the values counted, either way', async () => {
    for (const body of [
      [event(2), event(4), event(0)],
      padded([event(2), event(4), event(0)]),
      { api_key: 'phc_k', batch: [event(1)] },
    ]) {
      const seen: unknown[] = [];
      let values = 0;
      const value = await decodeCaptureBody({ bytes: Buffer.from(JSON.stringify(body)) }, limits, {
        onFirstEvent: (first, root) => seen.push(first, root),
        onSlice: (progress) => {
          values = progress.values;
        },
      });
      expect(value).toEqual(body);
      type Ev = { properties: { $snapshot_data: unknown[] }; pad?: string };
      const events = (Array.isArray(body) ? body : body.batch) as Ev[];
      expect(seen).toEqual([events[0], Array.isArray(body) ? null : body]);
      // root, events, per event: object, properties, $snapshot_data array and its zeros, 'event' string (+ pad).
      const expected = Array.isArray(body)
        ? 1 +
          events.reduce(
            (n, e) => n + 4 + e.properties.$snapshot_data.length + (e.pad === undefined ? 0 : 1),
            0,
          )
        : 1 + 1 + 1 + 4 + 1;
      expect(values).toBe(expected);
    }
  });

  it('a __proto__ key stays an own property when parsed at once', async () => {
    const value = (await decodeCaptureBody(
      { bytes: Buffer.from('[{"__proto__":{"polluted":1}}]') },
      limits,
    )) as object[];
    expect(Object.getOwnPropertyNames(value[0])).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('decodeCaptureBody: the slice hook is awaited', () => {
  const limits = { maxBytes: 1024 * 1024, maxDepth: 10, maxValues: 100_000 };
  const small = gzipSync(JSON.stringify([{ event: '$snapshot' }]));
  const large = gzipSync(JSON.stringify([{ event: '$snapshot', pad: 'x'.repeat(300_000) }]));

  it.each([
    ['parsed at once', small],
    ['streamed', large],
  ])('%s: a rejecting hook rejects the decode (never an unhandled rejection)', async (_name, bytes) => {
    const busy = new ApiError(503, 'unavailable', 'busy');
    const decoding = decodeCaptureBody({ bytes, compression: 'gzip-js' }, limits, {
      onSlice: () => Promise.reject(busy),
    });
    await expect(decoding).rejects.toBe(busy);
  });

  it.each([
    ['parsed at once', small],
    ['streamed', large],
  ])('%s: the decode waits for a hook that waits', async (_name, bytes) => {
    let release: () => void = () => undefined;
    let settled = false;
    let calls = 0;
    const decoding = decodeCaptureBody({ bytes, compression: 'gzip-js' }, limits, {
      // The first slice waits (as the memory budget makes a request wait); the others pass.
      onSlice: () => (calls++ ? undefined : new Promise<void>((resolve) => (release = resolve))),
    }).then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    release();
    await decoding;
    expect(settled).toBe(true);
  });
});

describe('decodeCaptureBody: a body read as it arrives', () => {
  const limits = { maxBytes: 4 * 1024 * 1024, maxDepth: 20, maxValues: 500_000 };
  /** `bytes` as a request delivers them, `size` bytes at a time. */
  async function* arriving(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  }
  const events = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ event: '$snapshot', properties: { i, text: `héllo ${i}` } }));
  const largeJson = JSON.stringify(events(20_000)); // about 1 MB
  const form = (data: string, extra = '') => Buffer.from(`data=${encodeURIComponent(data)}${extra}`);
  const cases: [
    string,
    Buffer,
    Partial<{ contentType: string; contentEncoding: string; compression: string }>,
  ][] = [
    ['small JSON', Buffer.from(json), {}],
    ['small gzip', gzipSync(json), { compression: 'gzip-js' }],
    ['small Content-Encoding gzip', gzipSync(json), { contentEncoding: 'gzip' }],
    ['large JSON', Buffer.from(largeJson), { contentType: 'application/json' }],
    ['large gzip, no hint', gzipSync(largeJson), {}],
    ['large Content-Encoding deflate', deflateSync(largeJson), { contentEncoding: 'deflate' }],
    ['large form of base64', form(b64(largeJson)), { contentType: 'application/x-www-form-urlencoded' }],
    ['large form of base64 gzip', form(b64(gzipSync(largeJson)), '&compression=gzip-js'), {}],
    ['large all-base64', Buffer.from(b64(largeJson)), {}],
  ];

  it.each(cases)(
    '%s: the same value as the whole body, in small and large pieces',
    async (_name, bytes, rest) => {
      const whole = await decodeCaptureBody({ bytes, ...rest }, limits);
      for (const size of [1000, 64 * 1024]) {
        expect(await decodeCaptureBody({ stream: arriving(bytes, size), ...rest }, limits)).toEqual(whole);
      }
    },
  );

  /** Decodes `bytes` as they arrive; returns the most bytes held outside the parser, and what is left held. */
  async function held(bytes: Buffer, rest: object = {}) {
    let now = 0;
    let most = 0;
    await decodeCaptureBody({ stream: arriving(bytes, 16 * 1024), ...rest }, limits, {
      onHeld: (n) => {
        now += n;
        most = Math.max(most, now);
      },
    });
    return { most, now };
  }

  it('holds no more than the first 128 KiB and a piece of a large JSON or gzip body', async () => {
    // Random text, so that its gzip is as large.
    const noise = JSON.stringify([{ event: '$snapshot', noise: randomBytes(300_000).toString('base64') }]);
    for (const bytes of [Buffer.from(largeJson), gzipSync(noise)]) {
      expect(bytes.length).toBeGreaterThan(160 * 1024);
      const { most } = await held(bytes);
      expect(most).toBeGreaterThan(128 * 1024);
      // The first 128 KiB and the piece past it, and the first decoded piece (at most 64 KiB) while the start
      // of the body is sniffed.
      expect(most).toBeLessThanOrEqual(128 * 1024 + 16 * 1024 + 64 * 1024);
    }
  });

  it('accounts for every copy of a form body, and lets go of all but the data field and its bytes', async () => {
    const bytes = form(b64(largeJson));
    const { most, now } = await held(bytes, { contentType: 'application/x-www-form-urlencoded' });
    // Received bytes, their joined copy, the text, the form's fields, the base64 being compacted.
    expect(most).toBeGreaterThanOrEqual(4 * bytes.length);
    expect(most).toBeLessThanOrEqual(8 * bytes.length);
    // What stays held while the parser goes through the decoded JSON: the data field's text (2 bytes per
    // character at most), the decoded JSON and the first chunks read; not the body and its other copies.
    const data = b64(largeJson).length;
    expect(now).toBeGreaterThanOrEqual(2 * data + Buffer.byteLength(largeJson));
    expect(now).toBeLessThanOrEqual(2 * data + Buffer.byteLength(largeJson) + 256 * 1024);
  });

  it('stops at the hook: a rejected hold ends the decode with its error', async () => {
    const busy = new ApiError(503, 'unavailable', 'busy');
    const decoding = decodeCaptureBody({ stream: arriving(Buffer.from(largeJson), 16 * 1024) }, limits, {
      onHeld: () => Promise.reject(busy),
    });
    await expect(decoding).rejects.toBe(busy);
  });

  it('an empty body is 400', async () => {
    const error = await rejection(decodeCaptureBody({ stream: arriving(Buffer.alloc(0), 10) }, limits));
    expect(error.getStatus()).toBe(400);
  });
});
