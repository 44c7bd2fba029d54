import { ALL_SCOPES, isScope } from '../common/auth/scopes.js';

/**
 * The scopes a project secret API key may carry: those of the routes that take a project secret credential
 * (`@AcceptsProjectSecret`), as PostHog allows only the scopes of its routes that take one. Here that is the
 * server SDKs' local evaluation poll. Read scopes only: a key that outlives people is not a way to change things.
 */
export const PROJECT_SECRET_API_KEY_SCOPES: readonly string[] = ['feature_flag:read'];

/**
 * The scopes of a new or changed key, deduplicated and sorted, or the reason they are refused (PostHog's
 * messages): `*`, a string that is no scope, or a scope a project secret API key may not carry.
 */
export function projectSecretKeyScopes(scopes: readonly string[]): string[] | string {
  for (const scope of scopes) {
    if (scope === ALL_SCOPES) {
      return "Wildcard scope '*' is not allowed for project secret API keys. Please specify explicit scopes.";
    }
    if (!isScope(scope)) return `Invalid scope: ${scope}`;
    if (!PROJECT_SECRET_API_KEY_SCOPES.includes(scope)) {
      return (
        `Scope '${scope}' is not available for project secret API keys. ` +
        `Allowed scopes: ${PROJECT_SECRET_API_KEY_SCOPES.join(', ')}`
      );
    }
  }
  return [...new Set(scopes)].sort();
}
