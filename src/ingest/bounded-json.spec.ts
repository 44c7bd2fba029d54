import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { BoundedJsonParser, type JsonHooks, type JsonLimits, valuesWithinLimits } from './bounded-json.js';

const OPEN: JsonLimits = { maxBytes: 1 << 30, maxDepth: 1000, maxValues: 1e7 };

/** Parses `text` written in chunks of `size` bytes (a size of 0: one chunk). */
function parse(text: string | Buffer, size = 0, limits: JsonLimits = OPEN, hooks?: JsonHooks): unknown {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const parser = new BoundedJsonParser(limits, hooks);
  if (!size) parser.write(bytes);
  else for (let i = 0; i < bytes.length; i += size) parser.write(bytes.subarray(i, i + size));
  return parser.end();
}

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

const SAMPLES = [
  '[]',
  '{}',
  '  [ 1 , -2.5e3 , 0 , true , false , null , "x" ]  ',
  '{"a":{"b":[{"c":[]},{}]},"d":""}',
  '"just a string"',
  '42',
  '-0.125E-2',
  'null',
  '"escapes: \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00 \\u0000 \\ud800"',
  '{"héllo wörld ✓ 😀":"ünïcödé 😀 ✓","dup":1,"dup":2}',
  '{"__proto__":{"polluted":true},"constructor":1,"toString":"x","hasOwnProperty":null}',
  '\ufeff[{"bom":true}]',
  JSON.stringify({
    event: '$snapshot',
    properties: {
      $snapshot_data: Array.from({ length: 50 }, (_, i) => ({
        type: 3,
        timestamp: 1763719200000 + i,
        data: { source: 1, positions: [{ x: i, y: -i, id: 5, timeOffset: i * 0.5 }], text: 'ä'.repeat(i) },
      })),
    },
  }),
];

describe('BoundedJsonParser', () => {
  it.each(SAMPLES.map((s) => [s.slice(0, 40), s]))(
    'builds what JSON.parse builds, however the text is chunked: %s',
    (_label, text) => {
      const expected = JSON.parse(text.replace(/^\ufeff/, ''));
      for (const size of [0, 1, 2, 3, 5, 7, 64]) {
        expect(parse(text, size)).toEqual(expected);
      }
    },
  );

  it('keeps __proto__ as an own property, never the prototype', () => {
    const value = parse('{"__proto__":{"polluted":true},"a":{"__proto__":[1]}}', 3) as Record<
      string,
      Record<string, unknown>
    >;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(value)).toBe('{"__proto__":{"polluted":true},"a":{"__proto__":[1]}}');
  });

  it('decodes a multi-byte character split between chunks', () => {
    const text = Buffer.from('["😀é"]');
    for (let cut = 1; cut < text.length; cut++) {
      const parser = new BoundedJsonParser(OPEN);
      parser.write(text.subarray(0, cut));
      parser.write(text.subarray(cut));
      expect(parser.end()).toEqual(['😀é']);
    }
  });

  it.each([
    '',
    '[',
    '[1,]',
    '[,1]',
    '{"a"}',
    '{"a":}',
    '{"a":1,}',
    '{,"a":1}',
    '{1:2}',
    '[1 2]',
    '[1]]',
    '[1] [2]',
    '[01]',
    '[1.]',
    '[.5]',
    '[+1]',
    '[0x10]',
    '[Infinity]',
    '[NaN]',
    '[tru]',
    '[nulll]',
    '["unterminated]',
    '["bad escape \\x"]',
    '["raw\ncontrol"]',
    '["raw\u0000nul"]',
    '{"a":1}}',
  ])('rejects %j as JSON.parse does: 400 parse_error', (text) => {
    expect(() => JSON.parse(text)).toThrow();
    for (const size of [0, 1]) {
      expect(failure(() => parse(text, size)).body).toEqual({
        type: 'validation_error',
        code: 'parse_error',
        detail: 'Malformed request body: not valid JSON.',
        attr: null,
      });
    }
  });

  it('refuses nesting deeper than maxDepth with 400, before reading on', () => {
    const limits = { ...OPEN, maxDepth: 5 };
    expect(parse('[[[[[1]]]]]', 0, limits)).toEqual([[[[[1]]]]]);
    const error = failure(() => parse(`${'['.repeat(10000)}${']'.repeat(10000)}`, 0, limits));
    expect(error.getStatus()).toBe(400);
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'The request body is nested too deeply: at most 5 levels of arrays and objects.',
      attr: null,
    });
  });

  it('refuses more values than maxValues with 413 as soon as the limit is passed', () => {
    const limits = { ...OPEN, maxValues: 4 };
    expect(parse('[1,2,3]', 0, limits)).toEqual([1, 2, 3]);
    const parser = new BoundedJsonParser(limits);
    // The rest of a huge body is never looked at: the error comes from the first chunk.
    const error = failure(() => parser.write(Buffer.from('[{},{},{},{},{}')));
    expect(error.getStatus()).toBe(413);
    expect(error.detail).toBe('Request body has too many JSON values: at most 4.');
  });

  it('refuses an object of more than maxKeys members with 413 at the first one over, also when parsed at once', () => {
    const limits = { ...OPEN, maxKeys: 3 };
    expect(parse('[{"a":1,"b":2,"c":3},{"a":{"x":1,"y":2,"z":3}}]', 0, limits)).toEqual([
      { a: 1, b: 2, c: 3 },
      { a: { x: 1, y: 2, z: 3 } },
    ]);
    const parser = new BoundedJsonParser(limits);
    const error = failure(() => parser.write(Buffer.from('[{"a":1,"b":2,"c":3,"d":4,')));
    expect(error.getStatus()).toBe(413);
    expect(error.detail).toBe('Request body has a JSON object with too many keys: at most 3.');
    // A repeated key counts each time it appears.
    expect(failure(() => parse('{"a":1,"a":2,"a":3,"a":4}', 0, limits)).getStatus()).toBe(413);
    expect(valuesWithinLimits({ a: 1, b: 2, c: 3 }, limits)).toBe(4);
    expect(valuesWithinLimits({ a: 1, b: 2, c: 3, d: 4 }, limits)).toBe(-1);
  });

  it('refuses more decoded bytes than maxBytes with 413', () => {
    const error = failure(() => parse('["0123456789"]', 4, { ...OPEN, maxBytes: 10 }));
    expect(error.getStatus()).toBe(413);
    expect(error.detail).toBe('Request body is too large: at most 10 bytes (decompressed).');
  });

  it('counts the events of the root array and of a batch, and rrweb events per $snapshot_data', () => {
    const limits = { ...OPEN, maxEvents: 2, maxSnapshotEvents: 3 };
    expect(parse('[{},{}]', 1, limits)).toEqual([{}, {}]);
    expect(failure(() => parse('[{},{},{}]', 1, limits)).detail).toBe(
      'Too many events in one request: at most 2.',
    );
    expect(failure(() => parse('{"batch":[1,2,3],"api_key":"k"}', 1, limits)).detail).toBe(
      'Too many events in one request: at most 2.',
    );
    // Arrays elsewhere are not events.
    expect(parse('[{"x":[1,2,3,4,5]}]', 1, limits)).toEqual([{ x: [1, 2, 3, 4, 5] }]);
    expect(parse('{"x":{"batch":[1,2,3]}}', 1, limits)).toEqual({ x: { batch: [1, 2, 3] } });
    const snapshot = (n: number) =>
      JSON.stringify([{ properties: { $snapshot_data: Array.from({ length: n }, () => ({})) } }]);
    expect(parse(snapshot(3), 5, limits)).toEqual(JSON.parse(snapshot(3)));
    const error = failure(() => parse(snapshot(4), 5, limits));
    expect(error.getStatus()).toBe(413);
    expect(error.detail).toBe('Too many rrweb events in one $snapshot event: at most 3.');
  });

  it('hands over the first event as soon as it is complete, with the batch root when there is one', () => {
    const seen: unknown[] = [];
    const hooks: JsonHooks = {
      onFirstEvent: (event, root) => seen.push([event, root && JSON.parse(JSON.stringify(root))]),
    };
    const parser = new BoundedJsonParser(OPEN, hooks);
    parser.write(Buffer.from('[{"token":"phc_a","x":[1]},{"tok'));
    expect(seen).toEqual([[{ token: 'phc_a', x: [1] }, null]]);
    parser.write(Buffer.from('en":"other"}]'));
    parser.end();
    expect(seen).toHaveLength(1);

    seen.length = 0;
    parse('{"api_key":"phc_b","batch":[{"e":1},{"e":2}]}', 2, OPEN, hooks);
    expect(seen).toEqual([[{ e: 1 }, { api_key: 'phc_b', batch: [{ e: 1 }] }]]);
    seen.length = 0;
    parse('["not an object",{}]', 2, OPEN, hooks);
    expect(seen).toEqual([['not an object', null]]);
    seen.length = 0;
    parse('{"event":"$snapshot"}', 2, OPEN, hooks);
    expect(seen).toEqual([]);
  });

  it('stops at the first event when the hook throws, and on the next write after stop()', () => {
    const stop = new ApiError(401, 'not_authenticated', 'no token');
    const hooks: JsonHooks = {
      onFirstEvent: () => {
        throw stop;
      },
    };
    const parser = new BoundedJsonParser(OPEN, hooks);
    expect(() => parser.write(Buffer.from('[{},{},{},'))).toThrow(stop);
    const other = new BoundedJsonParser(OPEN);
    other.write(Buffer.from('[1,'));
    other.stop(stop);
    expect(() => other.write(Buffer.from('2]'))).toThrow(stop);
  });

  it('counts every value it builds, across slices', () => {
    const text = `[${Array.from({ length: 250_000 }, (_, i) => `{"type":3,"timestamp":${i}}`).join(',')}]`;
    const parser = new BoundedJsonParser(OPEN);
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += 32 * 1024) parser.write(bytes.subarray(i, i + 32 * 1024));
    const value = parser.end() as unknown[];
    expect(value).toHaveLength(250_000);
    expect(parser.values).toBe(750_001);
  });
});

describe('maxSetValues', () => {
  const limits: JsonLimits = { ...OPEN, maxSetValues: 3 };

  it('keeps a $set within the limit as it is', () => {
    const text = '{"properties":{"$set":{"a":1,"b":[2]},"$set_once":{"c":{"d":1}}}}';
    expect(parse(text, 0, limits)).toEqual(JSON.parse(text));
  });

  it('keeps one value past the limit and builds nothing more of the $set, nested values included', () => {
    const keys = Array.from({ length: 1000 }, (_, i) => `"k${i}":{"x":[${i}]}`).join(',');
    for (const size of [0, 7]) {
      const parsed = parse(`[{"$set":{${keys}},"after":{"a":1,"b":2,"c":3,"d":4}}]`, size, limits) as {
        $set: Record<string, unknown>;
        after: unknown;
      }[];
      // k0 (1), its object's x (2), its array's element (3), k1 (4, one past): k1's contents are not kept.
      expect(parsed[0].$set).toEqual({ k0: { x: [0] }, k1: {} });
      // Other objects are not bounded by it.
      expect(parsed[0].after).toEqual({ a: 1, b: 2, c: 3, d: 4 });
    }
  });

  it('still counts every value against maxValues', () => {
    const keys = Array.from({ length: 100 }, (_, i) => `"k${i}":${i}`).join(',');
    expect(failure(() => parse(`{"$set":{${keys}}}`, 0, { ...limits, maxValues: 50 })).getStatus()).toBe(413);
  });
});
