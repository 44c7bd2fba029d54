import type { ErrorBody } from './api-error.js';

/** An error as the exception filter settled it: its status, the service's body, and its headers. */
export interface SettledError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/** How a protocol other than the service's API spells an error: its body and media type. */
export interface ErrorDialect {
  /** Path prefix whose every error it renders (`/scim/v2`), also of unknown paths under it. */
  prefix: string;
  contentType: string;
  render(error: SettledError, exception: unknown): unknown;
}

const dialects: ErrorDialect[] = [];

/**
 * Registers the error body of a protocol served under a path prefix (SCIM's RFC 7644 errors under `/scim/v2`):
 * the exception filter renders every error of a request under it so — thrown by a handler or a guard, an
 * unknown path, a refused body — with the same statuses and headers. Registered by the feature's module at boot.
 */
export function registerErrorDialect(dialect: ErrorDialect): void {
  if (!dialects.some((d) => d.prefix === dialect.prefix)) dialects.push(dialect);
}

/** The dialect of the request path, if any. */
export function errorDialectFor(path: string): ErrorDialect | undefined {
  return dialects.find((d) => path === d.prefix || path.startsWith(`${d.prefix}/`));
}
