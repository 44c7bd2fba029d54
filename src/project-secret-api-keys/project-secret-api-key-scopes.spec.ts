import '../features.js';
import { describe, expect, it } from '@jest/globals';
import { PROJECT_SECRET_API_KEY_SCOPES, projectSecretKeyScopes } from './project-secret-api-key-scopes.js';

describe('projectSecretKeyScopes', () => {
  it('allows only the scopes of routes that take a project secret: feature_flag:read', () => {
    expect(PROJECT_SECRET_API_KEY_SCOPES).toEqual(['feature_flag:read']);
    expect(projectSecretKeyScopes(['feature_flag:read', 'feature_flag:read'])).toEqual(['feature_flag:read']);
  });

  it.each([
    [['*'], "Wildcard scope '*' is not allowed for project secret API keys. Please specify explicit scopes."],
    [['invalid'], 'Invalid scope: invalid'],
    [['feature_flag:delete'], 'Invalid scope: feature_flag:delete'],
    [
      ['feature_flag:write'],
      "Scope 'feature_flag:write' is not available for project secret API keys. Allowed scopes: feature_flag:read",
    ],
    [
      ['feature_flag:read', 'project:read'],
      "Scope 'project:read' is not available for project secret API keys. Allowed scopes: feature_flag:read",
    ],
  ])("refuses %j with PostHog's message", (scopes, message) => {
    expect(projectSecretKeyScopes(scopes)).toBe(message);
  });
});
