import { describe, expect, it } from '@jest/globals';
import {
  applyUpdate,
  boundedUpdate,
  countSetValues,
  jsonBytes,
  jsonBytesWithin,
  setLimitProblem,
  trimProperties,
} from './person-properties.js';

const manyKeys = (n: number): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) out[`k${i}`] = i;
  return out;
};

describe('countSetValues', () => {
  it('counts keys and array elements, nested included', () => {
    expect(countSetValues({}, 10)).toBe(0);
    expect(countSetValues({ a: 1, b: 'x' }, 10)).toBe(2);
    expect(countSetValues({ a: { b: 1, c: [1, 2, { d: 3 }] } }, 100)).toBe(7);
  });
  it('stops counting past the limit', () => {
    expect(countSetValues(manyKeys(1000), 10)).toBe(11);
    expect(countSetValues({ a: Array.from({ length: 5000 }, () => 0) }, 10)).toBe(11);
  });
});

describe('jsonBytes and jsonBytesWithin', () => {
  it('measure compact UTF-8 JSON exactly when within the limit', () => {
    const value = { email: 'adà@example.com', n: [1, 2], nested: { ok: true } };
    const exact = Buffer.byteLength(JSON.stringify(value));
    expect(jsonBytes(value)).toBe(exact);
    expect(jsonBytesWithin(value, exact)).toBe(exact);
    expect(jsonBytesWithin(value, exact - 1)).toBeGreaterThan(exact - 1);
  });
  it('says "over" for a plainly larger value without serialising it whole', () => {
    expect(jsonBytesWithin({ big: 'x'.repeat(10_000_000) }, 1000)).toBeGreaterThan(1000);
  });
});

describe('setLimitProblem', () => {
  const limits = { maxKeys: 3, maxBytes: 40 };
  it('accepts a set within both limits', () => {
    expect(setLimitProblem({ a: 1, b: 2, c: 3 }, limits)).toBeNull();
  });
  it('names the key limit', () => {
    expect(setLimitProblem({ a: 1, b: 2, c: 3, d: 4 }, limits)).toBe(
      'more than 3 keys (PERSON_SET_MAX_KEYS)',
    );
    expect(setLimitProblem({ a: [1, 2, 3] }, limits)).toBe('more than 3 keys (PERSON_SET_MAX_KEYS)');
  });
  it('names the byte limit', () => {
    expect(setLimitProblem({ a: 'x'.repeat(40) }, limits)).toBe('more than 40 bytes (PERSON_SET_MAX_BYTES)');
  });
  it('answers a 100,000-key set (more than an API body holds) quickly', () => {
    // Capture never builds such a set (its parser stops at PERSON_SET_MAX_KEYS); the API's JSON body can.
    const huge = manyKeys(100_000);
    const before = process.cpuUsage();
    expect(setLimitProblem(huge, { maxKeys: 1000, maxBytes: 65536 })).toBe(
      'more than 1000 keys (PERSON_SET_MAX_KEYS)',
    );
    // Its own CPU time (not the wall clock, which on a shared machine includes waiting for a core): far below
    // the seconds a walk of every key would take.
    const { user, system } = process.cpuUsage(before);
    expect((user + system) / 1000).toBeLessThan(1000);
  });
});

describe('applyUpdate', () => {
  it('sets $set keys, $set_once keys only where absent, keeps the rest', () => {
    expect(
      applyUpdate({ a: 1, b: 2 }, { set: { b: 20, c: 30 }, setOnce: { a: 100, d: 40, c: 300 } }),
    ).toEqual({ a: 1, b: 20, c: 30, d: 40 });
  });
  it('keeps __proto__ as a plain key', () => {
    const set = JSON.parse('{"__proto__":{"admin":true}}') as Record<string, unknown>;
    const out = applyUpdate({}, { set, setOnce: {} });
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('trimProperties', () => {
  it('leaves properties within the limit alone', () => {
    const props = { a: 1 };
    expect(trimProperties(props, 100)).toEqual({ properties: props, bytes: 7, removed: [] });
  });
  it('removes the largest properties first, protected ones last, down to the limit exactly measured', () => {
    const props = {
      email: 'ada@example.com',
      big: 'x'.repeat(500),
      medium: 'y'.repeat(200),
      small: 's',
      $initial_referrer: 'r'.repeat(300),
    };
    const result = trimProperties(props, 400);
    expect(result.removed).toEqual(['big', 'medium']);
    expect(result.properties).toEqual({
      email: 'ada@example.com',
      small: 's',
      $initial_referrer: 'r'.repeat(300),
    });
    expect(result.bytes).toBe(jsonBytes(result.properties));
    const tighter = trimProperties(props, 100);
    expect(tighter.removed).toEqual(['big', 'medium', 'small', '$initial_referrer']);
    expect(tighter.properties).toEqual({ email: 'ada@example.com' });
    expect(tighter.bytes).toBeLessThanOrEqual(100);
  });
  it('trims protected properties too when nothing else is left', () => {
    const result = trimProperties({ email: 'e'.repeat(100), name: 'n' }, 20);
    expect(result.properties).toEqual({ name: 'n' });
    expect(result.bytes).toBe(jsonBytes({ name: 'n' }));
  });
  it('always ends within the limit, to the byte', () => {
    for (let max = 2; max < 120; max++) {
      const props = { a: 'x'.repeat(30), b: 'y'.repeat(20), c: 'z'.repeat(10), d: 1 };
      const result = trimProperties(props, max);
      expect(result.bytes).toBe(jsonBytes(result.properties));
      expect(result.bytes).toBeLessThanOrEqual(max);
      // Nothing more was removed than needed: putting back the last removed key passes the limit.
      if (result.removed.length) {
        const last = result.removed[result.removed.length - 1] as keyof typeof props;
        expect(jsonBytes({ ...result.properties, [last]: props[last] })).toBeGreaterThan(max);
      }
    }
  });
});

describe('boundedUpdate', () => {
  it('applies an update that fits', () => {
    const r = boundedUpdate({ a: 1 }, { set: { b: 2 }, setOnce: {} }, 100);
    expect(r).toEqual({ properties: { a: 1, b: 2 }, bytes: 13, applied: true, trimmed: [] });
  });
  it('leaves out an update that would pass the limit of a person within it', () => {
    const existing = { a: 'x'.repeat(50) };
    const r = boundedUpdate(existing, { set: { b: 'y'.repeat(60) }, setOnce: {} }, 100);
    expect(r).toEqual({ properties: existing, bytes: jsonBytes(existing), applied: false, trimmed: [] });
  });
  it('replacing a value by one of the same size still fits at the limit', () => {
    const existing = { a: 'x'.repeat(50) };
    const max = jsonBytes(existing);
    const r = boundedUpdate(existing, { set: { a: 'z'.repeat(50) }, setOnce: {} }, max);
    expect(r.applied).toBe(true);
    expect(r.properties).toEqual({ a: 'z'.repeat(50) });
  });
  it('trims a person already past the limit, then applies the update when it fits', () => {
    const existing = { email: 'ada@example.com', junk: 'j'.repeat(1000) };
    const r = boundedUpdate(existing, { set: { plan: 'pro' }, setOnce: {} }, 100);
    expect(r).toEqual({
      properties: { email: 'ada@example.com', plan: 'pro' },
      bytes: jsonBytes({ email: 'ada@example.com', plan: 'pro' }),
      applied: true,
      trimmed: ['junk'],
    });
  });
  it('trims a person past the limit and leaves out an update that still does not fit', () => {
    const existing = { email: 'ada@example.com', junk: 'j'.repeat(1000) };
    const r = boundedUpdate(existing, { set: { more: 'm'.repeat(200) }, setOnce: {} }, 100);
    expect(r.applied).toBe(false);
    expect(r.properties).toEqual({ email: 'ada@example.com' });
    expect(r.trimmed).toEqual(['junk']);
  });
});
