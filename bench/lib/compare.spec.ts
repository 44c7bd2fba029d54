import { describe, expect, it } from '@jest/globals';
import { compareAnswers, firstDifference, withoutVolatile } from './compare.js';

describe('withoutVolatile', () => {
  it('removes top-level fields and fields under arrays by pattern', () => {
    const body = {
      id: 'a',
      name: 'x',
      results: [
        { id: 1, created_at: 't1', keep: true },
        { id: 2, created_at: 't2', keep: false },
      ],
    };
    expect(withoutVolatile(body, ['id', 'results.*.created_at'])).toEqual({
      name: 'x',
      results: [
        { id: 1, keep: true },
        { id: 2, keep: false },
      ],
    });
  });

  it('only removes a field at the matching depth', () => {
    expect(withoutVolatile({ id: 1, created_by: { id: 7 } }, ['id'])).toEqual({ created_by: { id: 7 } });
  });

  it('keeps the key order of what remains', () => {
    const out = withoutVolatile({ c: 1, id: 2, a: 3 }, ['id']) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['c', 'a']);
  });
});

describe('firstDifference', () => {
  it('is null for identical values', () => {
    expect(firstDifference({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBeNull();
  });

  it('names the path of a differing value', () => {
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe('$.a[1].b: 2 vs 3');
  });

  it('reports a different key order', () => {
    expect(firstDifference({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe('$: keys [a, b] vs [b, a]');
  });

  it('reports different array lengths and types', () => {
    expect(firstDifference([1, 2], [1])).toBe('$: 2 vs 1 elements');
    expect(firstDifference({ a: [] }, { a: {} })).toBe('$.a: array vs object');
    expect(firstDifference({ a: '1' }, { a: 1 })).toBe('$.a: "1" vs 1');
  });
});

describe('compareAnswers', () => {
  it('accepts the same JSON modulo volatile fields', () => {
    const a = { status: 201, body: '{"id":"1","created_at":"x","email":"e"}' };
    const b = { status: 201, body: '{"id":"2","created_at":"y","email":"e"}' };
    expect(compareAnswers(a, b, ['id', 'created_at'])).toEqual({ equal: true, difference: null });
  });

  it('refuses a different status, a non-JSON body or a different value', () => {
    expect(compareAnswers({ status: 200, body: '{}' }, { status: 404, body: '{}' }, [])).toEqual({
      equal: false,
      difference: 'status 200 vs 404',
    });
    expect(compareAnswers({ status: 200, body: 'oops' }, { status: 200, body: '{}' }, []).difference).toBe(
      'a body is not JSON',
    );
    expect(compareAnswers({ status: 200, body: '{"a":1}' }, { status: 200, body: '{"a":2}' }, [])).toEqual({
      equal: false,
      difference: '$.a: 1 vs 2',
    });
  });

  it('refuses the same values in another key order (the bytes differ)', () => {
    const result = compareAnswers(
      { status: 200, body: '{"a":1,"b":2}' },
      { status: 200, body: '{"b":2,"a":1}' },
      [],
    );
    expect(result.equal).toBe(false);
  });
});
