import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../errors/api-error.js';
import { isPlainObject, throwIfViolated, violation, violationError } from './violation.js';

describe('Violation helpers', () => {
  it('builds a violation with invalid_input as the default code', () => {
    expect(violation('Bad.', 'name')).toEqual({ detail: 'Bad.', attr: 'name', code: 'invalid_input' });
    expect(violation('Missing.', 'a__b', 'required')).toEqual({
      detail: 'Missing.',
      attr: 'a__b',
      code: 'required',
    });
  });

  it('turns a violation into the 400 error body', () => {
    const error = violationError(violation('Too long.', 'name', 'max_length'));
    expect(error).toBeInstanceOf(ApiError);
    expect(error.getStatus()).toBe(400);
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'max_length',
      detail: 'Too long.',
      attr: 'name',
    });
  });

  it('throws only when there is a violation', () => {
    expect(() => throwIfViolated(null)).not.toThrow();
    expect(() => throwIfViolated(undefined)).not.toThrow();
    expect(() => throwIfViolated(violation('No.', null))).toThrow(ApiError);
  });

  it('recognises JSON objects only', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject('x')).toBe(false);
    expect(isPlainObject(1)).toBe(false);
  });
});
