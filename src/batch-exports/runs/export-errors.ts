/**
 * An error ending a batch export attempt. `retryable`: the run is tried again after a backoff (destination
 * unreachable, server errors); otherwise the run ends `Failed` at once (bad credentials, missing bucket or
 * table, a destination this service does not deliver to). Messages name the problem, never a secret.
 */
export class ExportError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ExportError';
  }
}

export const nonRetryable = (message: string) => new ExportError(message, false);
export const retryable = (message: string) => new ExportError(message, true);

/** Network errors of Node that a later attempt may not meet (the peer is down or unreachable right now). */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export function isTransientNetworkError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && TRANSIENT_NETWORK_CODES.has(code);
}

/** A message safe to store and show: every secret value (and its URL-encoded form) replaced by `********`. */
export function scrubSecrets(message: string, secrets: readonly unknown[]): string {
  let out = message;
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('********');
  }
  return out.length > 2000 ? `${out.slice(0, 2000)}…` : out;
}

/**
 * The attempt was stopped from outside: the run was cancelled, the process is shutting down, another worker
 * holds the run, or the attempt reached its deadline (BATCH_EXPORT_ATTEMPT_TIMEOUT_MS).
 */
export class AttemptStopped extends Error {
  constructor(readonly reason: 'cancelled' | 'shutdown' | 'lost' | 'deadline') {
    super(`attempt stopped: ${reason}`);
    this.name = 'AttemptStopped';
  }
}
