import { describe, expect, it } from '@jest/globals';
import {
  isDatabaseTimeout,
  isDatabaseUnavailable,
  isForeignKeyViolation,
  isStatementTimeout,
  isTransactionConflict,
  isUniqueViolation,
} from './database-errors.js';

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

  it("recognises TypeORM's released query runner errors, thrown or wrapped", async () => {
    const { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } =
      await import('typeorm');
    expect(isDatabaseUnavailable(new QueryRunnerAlreadyReleasedError())).toBe(true);
    expect(isDatabaseUnavailable(new QueryRunnerProviderAlreadyReleasedError())).toBe(true);
    expect(
      isDatabaseUnavailable(new Error('commit failed', { cause: new QueryRunnerAlreadyReleasedError() })),
    ).toBe(true);
  });

  it('follows cause chains, driver errors and aggregated errors', () => {
    const deep = new Error('outer', { cause: new Error('middle', { cause: queryFailed(pgError('57P01')) }) });
    expect(isDatabaseUnavailable(deep)).toBe(true);
    expect(
      isDatabaseUnavailable(new AggregateError([new Error('x'), pgError('ECONNREFUSED')], 'all failed')),
    ).toBe(true);
    expect(
      isDatabaseUnavailable(new Error('outer', { cause: new Error('inner', { cause: pgError('23505') }) })),
    ).toBe(false);
  });

  it('stops on a cycle and on very long chains', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(isDatabaseUnavailable(a)).toBe(false);
    let chain: Error = pgError('57P01');
    for (let i = 0; i < 100; i++) chain = new Error(`wrap ${i}`, { cause: chain });
    expect(isDatabaseUnavailable(chain)).toBe(false);
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

  it("matches a Citus shard's copy of the constraint, named in the message only, and nothing else", () => {
    const onShard = (code: string, name: string) =>
      pgError(code, { message: `duplicate key value violates unique constraint "${name}"` });
    expect(
      isUniqueViolation(
        onShard('23505', 'roles_organization_name_key_102017'),
        'roles_organization_name_key',
      ),
    ).toBe(true);
    expect(
      isUniqueViolation(onShard('23505', 'roles_organization_name_key'), 'roles_organization_name_key'),
    ).toBe(true);
    expect(
      isUniqueViolation(onShard('23505', 'roles_organization_name_key_102017'), 'roles_organization'),
    ).toBe(false);
    expect(
      isUniqueViolation(onShard('23505', 'roles_organization_name_key_x1'), 'roles_organization_name_key'),
    ).toBe(false);
    expect(isUniqueViolation(pgError('23505', { constraint: 'uq_a_12' }), 'uq_a')).toBe(true);
    expect(isForeignKeyViolation(onShard('23503', 'FK_abc_102108'), 'FK_abc')).toBe(true);
    expect(isForeignKeyViolation(onShard('23503', 'FK_abcd'), 'FK_abc')).toBe(false);
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

describe('isDatabaseTimeout', () => {
  it('recognises lock_not_available and query_canceled (lock and statement timeouts), bare or wrapped', () => {
    expect(isDatabaseTimeout(pgError('55P03'))).toBe(true);
    expect(isDatabaseTimeout({ driverError: pgError('57014') })).toBe(true);
    for (const other of [pgError('40P01'), pgError('23505'), pgError('57P01'), new Error('x'), null]) {
      expect(isDatabaseTimeout(other)).toBe(false);
    }
  });
});

describe('isTransactionConflict', () => {
  it.each(['40P01', '40001'])('recognises SQLSTATE %s, bare or wrapped by TypeORM', (code) => {
    expect(isTransactionConflict(pgError(code))).toBe(true);
    expect(isTransactionConflict(queryFailed(pgError(code)))).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505')],
    ['a lock timeout', pgError('55P03')],
    ['a plain error', new Error('deadlock detected')],
    ['null', null],
  ])('is false for %s', (_label, error) => {
    expect(isTransactionConflict(error)).toBe(false);
  });
});

describe('isForeignKeyViolation', () => {
  it('recognises SQLSTATE 23503 on the named constraint, bare or wrapped by TypeORM', () => {
    const error = queryFailed(pgError('23503', { constraint: 'plugin_configs_plugin_id_fkey' }));
    expect(isForeignKeyViolation(error)).toBe(true);
    expect(isForeignKeyViolation(error, 'plugin_configs_plugin_id_fkey')).toBe(true);
    expect(isForeignKeyViolation(error, 'other_fkey')).toBe(false);
    expect(isForeignKeyViolation(pgError('23503'))).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505')],
    ['a plain error', new Error('violates foreign key constraint')],
    ['null', null],
  ])('is false for %s', (_label, error) => {
    expect(isForeignKeyViolation(error)).toBe(false);
  });
});

describe('isStatementTimeout', () => {
  it("recognises PostgreSQL's statement timeout, bare or wrapped by TypeORM", () => {
    const pg = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    expect(isStatementTimeout(pg)).toBe(true);
    expect(isStatementTimeout({ driverError: pg })).toBe(true);
  });

  it('is false for another cancel and for other errors', () => {
    const cancel = Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
    expect(isStatementTimeout(cancel)).toBe(false);
    expect(isStatementTimeout(new Error('statement timeout'))).toBe(false);
    expect(isStatementTimeout(null)).toBe(false);
  });
});
