/** Values e2e specs compare responses with: one definition, so every spec asserts the same contract. */

import { expect } from '@jest/globals';
import type { Response, Test } from 'supertest';

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };

export const NOT_AUTHENTICATED = {
  type: 'authentication_error',
  code: 'not_authenticated',
  detail: 'Authentication credentials were not provided.',
  attr: null,
};

/** 403 for an action above the caller's membership level. */
export const INSUFFICIENT = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: 'Your organization access level is insufficient.',
  attr: null,
};

/** 403 for a key without the scope an operation requires. */
export const missingScope = (scope: string) => ({
  type: 'authentication_error',
  code: 'permission_denied',
  detail: `API key missing required scope '${scope}'`,
  attr: null,
});

type Headers = Record<string, string>;

/**
 * The scope contract of one operation: no key → 401 `NOT_AUTHENTICATED`; a key without `scope` → 403
 * naming it; and, when `allowed` is given, a key holding the scope gets `allowed.status`. `send` builds the
 * request (method, path, body) and sets the headers it is handed. Returns the allowed response, if any.
 */
export async function expectScopeEnforced(
  send: (headers: Headers) => Test,
  scope: string,
  withoutScope: Headers,
  allowed?: { headers: Headers; status: number },
): Promise<Response | undefined> {
  expect((await send({}).expect(401)).body).toEqual(NOT_AUTHENTICATED);
  expect((await send(withoutScope).expect(403)).body).toEqual(missingScope(scope));
  return allowed ? await send(allowed.headers).expect(allowed.status) : undefined;
}
