/** Values e2e specs compare responses with: one definition, so every spec asserts the same contract. */

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
