/** Recognises errors that mean "the database cannot be reached right now" (answered 503, not 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { code?: string; message?: string; driverError?: unknown };
  if (e.driverError && isDatabaseUnavailable(e.driverError)) return true;
  const code = e.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE'].includes(code))
    return true;
  // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections
  if (['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006'].includes(code)) return true;
  const message = e.message ?? '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    message,
  );
}

/** PostgreSQL unique_violation, optionally on a given constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = (error as { driverError?: unknown })?.driverError ?? error;
  const pgError = e as { code?: string; constraint?: string };
  return pgError?.code === '23505' && (!constraint || pgError.constraint === constraint);
}
