/**
 * What `/flags` and `/decide` read from a request, once its body is decoded (any encoding the SDK uses: see
 * `decodeCaptureBody`): the project token and the protocol version.
 */

/**
 * The project token of a decoded payload: `token`, else `api_key`, else `$token` (the names SDK versions
 * used), else the `token` query parameter. Null when there is none.
 */
export function tokenOf(payload: unknown, queryToken?: unknown): string | null {
  if (payload && typeof payload === 'object' && !Array.isArray(payload)) {
    const p = payload as Record<string, unknown>;
    for (const key of ['token', 'api_key', '$token']) {
      const value = p[key];
      if (typeof value === 'string' && value) return value;
    }
  }
  return typeof queryToken === 'string' && queryToken ? queryToken : null;
}

/** The protocol version of a request's `v` query parameter (absent or not a number: 1). */
export function protocolVersion(v: unknown): number {
  const n = typeof v === 'string' && /^\d{1,3}$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 1 ? n : 1;
}
