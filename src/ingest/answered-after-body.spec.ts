import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { answeredAfterBody } from './ingest-pipeline.js';

describe('answeredAfterBody', () => {
  it('waits for the body before refusing the request itself, never before shedding load or refusing a size', () => {
    const error = (status: number) => new ApiError(status, 'code', 'detail');
    expect([400, 401, 403, 404, 415].map((s) => answeredAfterBody(error(s)))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([413, 429, 500, 503].map((s) => answeredAfterBody(error(s)))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(answeredAfterBody(new Error('database down'))).toBe(false);
  });
});
