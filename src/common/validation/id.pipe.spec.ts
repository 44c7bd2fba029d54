import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/api-error.js';
import { IntIdPipe, UuidPipe } from './id.pipe.js';

function notFound(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a 404');
}

describe('UuidPipe', () => {
  const pipe = new UuidPipe();

  it('passes a uuid through in lower case', () => {
    expect(pipe.transform('3F1A2B4C-0000-4000-8000-00000000000A')).toBe(
      '3f1a2b4c-0000-4000-8000-00000000000a',
    );
  });

  it.each([
    'not-a-uuid',
    '',
    '3f1a2b4c-0000-4000-8000-00000000000',
    '3f1a2b4c00004000800000000000000a',
    ' 3f1a2b4c-0000-4000-8000-00000000000a',
  ])('answers %p with 404 not_found', (value) => {
    const error = notFound(() => pipe.transform(value));
    expect(error.getStatus()).toBe(404);
    expect(error.body).toEqual({
      type: 'invalid_request',
      code: 'not_found',
      detail: expect.any(String),
      attr: null,
    });
  });
});

describe('IntIdPipe', () => {
  const pipe = new IntIdPipe();

  it('parses positive 32-bit integers', () => {
    expect(pipe.transform('1')).toBe(1);
    expect(pipe.transform('2147483647')).toBe(2147483647);
  });

  it.each(['0', '-1', '2147483648', '1.5', '1e3', 'abc', '', ' 1', '0x10'])(
    'answers %p with 404',
    (value) => {
      expect(notFound(() => pipe.transform(value)).getStatus()).toBe(404);
    },
  );
});
