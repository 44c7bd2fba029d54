import { describe, expect, it } from '@jest/globals';
import { attrOf, escapeText, findInvalidInput, textProblem } from './text-input.js';

describe('textProblem', () => {
  it.each([
    ['plain', null],
    ['', null],
    ['emoji \ud83d\ude00 pair', null],
    ['a\u0000b', 'nul'],
    ['\u0000', 'nul'],
    ['lone high \ud800', 'surrogate'],
    ['lone high \ud800 then text', 'surrogate'],
    ['lone low \udc00', 'surrogate'],
    ['reversed \ude00\ud83d', 'surrogate'],
    ['U+FFFD \ufffd is fine', null],
  ])('%j → %s', (value, expected) => {
    expect(textProblem(value)).toBe(expected);
  });
});

describe('findInvalidInput', () => {
  it('accepts clean nested input and non-text values', () => {
    expect(findInvalidInput({ a: [1, true, null, { b: 'x' }], c: Buffer.from([0]) }, 8)).toBeNull();
  });

  it('names the path of a bad value, array indexes included', () => {
    expect(findInvalidInput({ a: { b: ['ok', 'bad\u0000'] } }, 8)).toEqual({
      path: ['a', 'b', '1'],
      problem: 'nul',
    });
    expect(findInvalidInput([{ first_name: '\udfff' }], 8)).toEqual({
      path: ['0', 'first_name'],
      problem: 'surrogate',
    });
  });

  it('checks object keys as well as values', () => {
    expect(findInvalidInput({ config: { 'k\u0000': 'v' } }, 8)).toEqual({
      path: ['config', 'k\u0000'],
      problem: 'nul',
      key: true,
    });
  });

  it('finds a bare string', () => {
    expect(findInvalidInput('\u0000', 8)).toEqual({ path: [], problem: 'nul' });
  });

  it('refuses nesting beyond the limit, the outermost level counting 1', () => {
    const nest = (n: number): unknown => (n === 0 ? 1 : { a: nest(n - 1) });
    expect(findInvalidInput(nest(3), 3)).toBeNull();
    expect(findInvalidInput(nest(4), 3)).toEqual({ path: ['a', 'a', 'a'], problem: 'depth' });
  });

  it('treats reserved names as plain keys', () => {
    const parsed = JSON.parse('{"__proto__": {"x": "\\u0000"}, "constructor": "ok"}') as unknown;
    expect(findInvalidInput(parsed, 8)).toEqual({ path: ['__proto__', 'x'], problem: 'nul' });
  });
});

describe('attrOf and escapeText', () => {
  it('joins with __ and escapes what cannot be echoed', () => {
    expect(attrOf(['destination', 'config', 'bucket_name'])).toBe('destination__config__bucket_name');
    expect(attrOf([])).toBeNull();
    expect(escapeText('a\u0000b\ud800c\ud83d\ude00')).toBe('a\\u0000b\\ud800c\ud83d\ude00');
  });
});
