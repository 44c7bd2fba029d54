import { describe, expect, it } from '@jest/globals';
import { inputError, undecodableQueryParameter } from './input-check.interceptor.js';

describe('undecodableQueryParameter', () => {
  it.each([
    ['/api/x', null],
    ['/api/x?a=1&b=%C3%A9&c', null],
    ['/api/x?search=a+b%20c', null],
    ['/api/x?search=100%&q=%zz%2', null],
    ['/api/x?a=1&search=%ED%A0%80', 'search'],
    ['/api/x?level=%FF', 'level'],
    ['/api/x?bad%FFkey=1', 'bad\ufffdkey'],
    ['/api/x?a=%E2%82', 'a'],
  ])('%s → %s', (url, expected) => {
    expect(undecodableQueryParameter(url)).toBe(expected);
  });
});

describe('inputError', () => {
  it('names the field and the problem', () => {
    expect(
      inputError({ path: ['destination', 'config', 'bucket_name'], problem: 'nul' }, 'body').body,
    ).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail:
        "Field 'destination__config__bucket_name' contains the NUL character (U+0000), which is not accepted.",
      attr: 'destination__config__bucket_name',
    });
    expect(inputError({ path: ['id'], problem: 'surrogate' }, 'path').body.detail).toBe(
      "Field 'id' contains an unpaired UTF-16 surrogate, which is not valid Unicode.",
    );
    expect(
      inputError({ path: ['properties', '\u0000'], problem: 'nul', key: true }, 'body').body,
    ).toMatchObject({
      attr: 'properties__\\u0000',
      detail: 'A key of the body contains the NUL character (U+0000), which is not accepted.',
    });
  });
});
