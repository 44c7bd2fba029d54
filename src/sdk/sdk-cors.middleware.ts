import type { NextFunction, Request, Response } from 'express';

/**
 * Path prefixes of the routes browsers call from any site: capture, remote config, flags, the SDK's scripts
 * and the refused analytics endpoints. They carry only the public project token, never a credential (the one
 * route under them that takes a key, the server SDKs' `/flags/definitions`, is left out by `sdkCors`).
 */
export const SDK_PUBLIC_PATHS = [
  '/s',
  '/array',
  '/flags',
  '/decide',
  '/static',
  '/e',
  '/i/v0/e',
  '/batch',
  '/capture',
  '/track',
  '/engage',
];

/** Header names a preflight may ask for (a comma-separated list of tokens). */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/**
 * CORS for the SDK routes only: any origin (`Access-Control-Allow-Origin: *`, no credentials — the SDK sends
 * none), preflights answered 204 with the methods and the headers asked for (the SDK sends `Content-Type:
 * application/json` and any `request_headers` its site configures). `Retry-After` is exposed for the SDK's
 * back-off. `Cross-Origin-Resource-Policy: cross-origin` lets a site load `/static/…` with a plain script tag.
 * The JSON API under `/api` keeps its own policy; this middleware is mounted on `SDK_PUBLIC_PATHS` only.
 */
export function sdkCors(req: Request, res: Response, next: NextFunction): void {
  // The server SDKs' definitions poll takes a personal API key: no browser calls it, it gets no CORS.
  if (isFlagDefinitions(req.originalUrl)) {
    next();
    return;
  }
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', 'Retry-After');
  res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
    const asked = req.headers['access-control-request-headers'];
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
    res.setHeader(
      'Access-Control-Allow-Headers',
      asked && HEADER_LIST.test(asked.trim()) ? asked.trim() : 'Content-Type',
    );
    res.setHeader('Access-Control-Max-Age', '86400');
    res.status(204).end();
    return;
  }
  next();
}

/** `/flags/definitions` (with or without a trailing slash or a query), under the SDK's `/flags` prefix. */
function isFlagDefinitions(url: string | undefined): boolean {
  return !!url && /^\/flags\/definitions(?:\/)?(?:\?|$)/.test(url);
}
