/**
 * Request URLs as they may be logged: the bearer credentials some public paths carry are replaced by
 * `[redacted]`. A share token is the whole access to a shared recording, so it never reaches a log line:
 *
 * - `/api/shared/<token>` (and everything below it, e.g. `/api/shared/<token>/snapshots`),
 * - the replay pages `/shared/<token>` and `/embedded/<token>`,
 * - the query parameters `access_token`, `sharing_access_token` and `share_token`, wherever they appear.
 *
 * Absolute URLs (a `Referer` header of a shared page) are handled alike. Matching ignores case and repeated slashes, as routing does, so no spelling that reaches a handler keeps its
 * token. Everything else (the path, the other query parameters) is kept for debugging. A pure function: the
 * request logger's serializer calls it, and so may any other code that logs a URL.
 */
export const REDACTED = '[redacted]';

/** Path prefixes whose next segment is a credential (`/api/embedded/…` does not exist; redacting it is harmless). */
const TOKEN_PATH = /^((?:\/+api)?\/+(?:shared|embedded)\/+)([^/?#]+)/i;
const SECRET_QUERY_PARAMS = new Set(['access_token', 'sharing_access_token', 'share_token']);

/**
 * What every URL with a credential to redact holds: a `shared`/`embedded` path segment, or a query parameter name
 * that is `token`-something once decoded and lower-cased (an encoded one has `%` or `+`; `u`: the Kelvin sign
 * lower-cases to `k`). Most URLs logged (`/e/?compression=gzip-js`, `/api/...`) have none and are kept as they
 * are without being taken apart.
 */
const MAY_HOLD_CREDENTIAL = /shared|embedded|token|[%+]/iu;

export function redactUrl(url: string | undefined | null): string {
  if (typeof url !== 'string' || url === '') return url ?? '';
  if (!MAY_HOLD_CREDENTIAL.test(url)) return url;
  // An absolute URL (a Referer header): the origin is kept as it is.
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url)?.[0] ?? '';
  return origin + redactRelative(url.slice(origin.length));
}

function redactRelative(url: string): string {
  const queryAt = url.search(/[?#]/);
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const rest = queryAt === -1 ? '' : url.slice(queryAt);
  return path.replace(TOKEN_PATH, `$1${REDACTED}`) + redactQuery(rest);
}

/** `?a=1&access_token=x#f` → `?a=1&access_token=[redacted]#f`; parameter names compared case-insensitively. */
function redactQuery(rest: string): string {
  if (!rest.startsWith('?')) return rest;
  const hashAt = rest.indexOf('#');
  const query = hashAt === -1 ? rest.slice(1) : rest.slice(1, hashAt);
  const fragment = hashAt === -1 ? '' : rest.slice(hashAt);
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    return SECRET_QUERY_PARAMS.has(name.toLowerCase()) && eq !== -1 ? `${rawName}=${REDACTED}` : part;
  });
  return `?${parts.join('&')}${fragment}`;
}
