const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);

/**
 * SQLSTATEs of a lost or refused connection: 57P01 admin_shutdown (pg_terminate_backend, a fast shutdown),
 * 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections, class 08 connection exceptions.
 */
const CONNECTION_STATES = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006']);

/**
 * TypeORM's errors for a query runner used after its connection was released, which happens when the
 * connection dies inside a transaction (the driver releases the runner on the connection's error) and the
 * transaction then sends its next statement or its COMMIT.
 */
const RELEASED_RUNNER_ERRORS = new Set([
  'QueryRunnerAlreadyReleasedError',
  'QueryRunnerProviderAlreadyReleasedError',
]);

const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i;

/** How many wrapped errors (`driverError`, `cause`, `errors`) are followed; the chains are short in practice. */
const MAX_CHAIN = 16;

/**
 * Recognises errors that mean "the database cannot be reached right now" (answered 503, not 500): socket
 * errors, PostgreSQL's connection SQLSTATEs, the pg driver's connection messages, and TypeORM's released query
 * runner errors, found on the error itself or anywhere in what it wraps (TypeORM's `driverError`, the standard
 * `cause`, an AggregateError's `errors`).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const pending: unknown[] = [error];
  const seen = new Set<unknown>();
  while (pending.length && seen.size < MAX_CHAIN) {
    const current = pending.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const e = current as {
      code?: unknown;
      message?: unknown;
      name?: unknown;
      driverError?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    if (typeof e.name === 'string' && RELEASED_RUNNER_ERRORS.has(e.name)) return true;
    if (typeof e.code === 'string' && (SOCKET_CODES.has(e.code) || CONNECTION_STATES.has(e.code)))
      return true;
    if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
    pending.push(e.driverError, e.cause, ...(Array.isArray(e.errors) ? (e.errors as unknown[]) : []));
  }
  return false;
}

/**
 * Whether the constraint an error reports is `constraint`. On a Citus cluster a constraint violated on a shard (a
 * reference table's copy or a distributed table's shard) is reported under the shard's name, the constraint's name
 * with `_<shard id>` appended (`roles_organization_name_key_102017`), and only in the message: Citus does not pass
 * the error's constraint field on. Both name the same constraint.
 */
function reportsConstraint(pgError: { constraint?: string; message?: unknown }, constraint: string): boolean {
  const quoted = typeof pgError.message === 'string' ? /constraint "([^"]+)"/.exec(pgError.message) : null;
  const reported = pgError.constraint ?? quoted?.[1];
  if (reported === undefined) return false;
  if (reported === constraint) return true;
  return reported.startsWith(`${constraint}_`) && /^\d+$/.test(reported.slice(constraint.length + 1));
}

/** PostgreSQL unique_violation, optionally on a given constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = (error as { driverError?: unknown })?.driverError ?? error;
  const pgError = e as { code?: string; constraint?: string; message?: unknown };
  return pgError?.code === '23505' && (!constraint || reportsConstraint(pgError, constraint));
}

/**
 * PostgreSQL deadlock_detected (40P01) or serialization_failure (40001): the transaction lost a race and was
 * rolled back as a whole, so running it again is safe.
 */
export function isTransactionConflict(error: unknown): boolean {
  const e = (error as { driverError?: unknown })?.driverError ?? error;
  const code = (e as { code?: string })?.code;
  return code === '40P01' || code === '40001';
}

/** PostgreSQL foreign_key_violation (23503), optionally on a given constraint; also when raised at commit. */
export function isForeignKeyViolation(error: unknown, constraint?: string): boolean {
  const e = (error as { driverError?: unknown })?.driverError ?? error;
  const pgError = e as { code?: string; constraint?: string; message?: unknown };
  return pgError?.code === '23503' && (!constraint || reportsConstraint(pgError, constraint));
}

/**
 * PostgreSQL lock_not_available (55P03: `lock_timeout`) or query_canceled (57014: `statement_timeout`): a statement
 * waited or ran too long, typically behind rows another transaction holds; its transaction is rolled back.
 */
export function isDatabaseTimeout(error: unknown): boolean {
  const e = (error as { driverError?: unknown })?.driverError ?? error;
  const code = (e as { code?: string })?.code;
  return code === '55P03' || code === '57014';
}

/**
 * PostgreSQL query_canceled (57014) raised by `statement_timeout`: the statement ran past the timeout of its
 * connection and PostgreSQL cancelled it (a cancel for another reason, pg_cancel_backend, is not this).
 */
export function isStatementTimeout(error: unknown): boolean {
  const e = (error as { driverError?: unknown })?.driverError ?? error;
  const pgError = e as { code?: string; message?: string };
  return pgError?.code === '57014' && /statement timeout/i.test(pgError.message ?? '');
}
