import { describe, expect, it } from '@jest/globals';
import { isDatabaseUnavailable, isUniqueViolation } from './database-errors.js';

/** An error shaped like node-postgres' DatabaseError. */
const pgError = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`pg error ${code}`), { code, ...extra });

/** An error shaped like TypeORM's QueryFailedError, wrapping a driver error. */
const queryFailed = (driverError: unknown) =>
  Object.assign(new Error('QueryFailedError: query failed'), { driverError });

describe('isDatabaseUnavailable', () => {
  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'])(
    'recognises the socket error %s',
    (code) => {
      expect(isDatabaseUnavailable(pgError(code))).toBe(true);
    },
  );

  it.each(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006'])(
    'recognises the PostgreSQL state %s',
    (code) => {
      expect(isDatabaseUnavailable(pgError(code))).toBe(true);
    },
  );

  it.each([
    'Connection terminated unexpectedly',
    'connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
  ])('recognises the driver message %j', (message) => {
    expect(isDatabaseUnavailable(new Error(message))).toBe(true);
  });

  it('looks inside a wrapped driver error', () => {
    expect(isDatabaseUnavailable(queryFailed(pgError('57P01')))).toBe(true);
    expect(isDatabaseUnavailable(queryFailed(new Error('Connection terminated')))).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505')],
    ['a syntax error', pgError('42601')],
    ['a statement timeout', pgError('57014')],
    ['a foreign key violation wrapped by TypeORM', queryFailed(pgError('23503'))],
    ['a plain error', new Error('something else')],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
    ['undefined', undefined],
    ['an empty object', {}],
  ])('is false for %s', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('isUniqueViolation', () => {
  it('recognises SQLSTATE 23505, bare or wrapped by TypeORM', () => {
    expect(isUniqueViolation(pgError('23505'))).toBe(true);
    expect(isUniqueViolation(queryFailed(pgError('23505', { constraint: 'uq_slug' })))).toBe(true);
  });

  it('matches the named constraint only', () => {
    const error = queryFailed(pgError('23505', { constraint: 'uq_organization_slug' }));
    expect(isUniqueViolation(error, 'uq_organization_slug')).toBe(true);
    expect(isUniqueViolation(error, 'uq_user_email')).toBe(false);
    expect(isUniqueViolation(pgError('23505'), 'uq_organization_slug')).toBe(false);
  });

  it.each([
    ['another SQLSTATE', pgError('23503')],
    ['a wrapped other SQLSTATE', queryFailed(pgError('23502'))],
    ['a numeric code', { code: 23505 }],
    ['a plain error', new Error('duplicate key value violates unique constraint')],
    ['null', null],
    ['undefined', undefined],
  ])('is false for %s', (_label, error) => {
    expect(isUniqueViolation(error)).toBe(false);
  });
});
