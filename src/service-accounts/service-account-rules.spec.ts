import '../features.js';
import { describe, expect, it } from '@jest/globals';
import { keyScopes, projectsWithinCaller, scopeBeyondCaller } from './service-account-rules.js';

describe('keyScopes', () => {
  it('normalises a list of known scopes, or `*` alone', () => {
    expect(keyScopes(['project:read', 'organization:read', 'project:read'])).toEqual([
      'organization:read',
      'project:read',
    ]);
    expect(keyScopes(['*'])).toEqual(['*']);
    expect(keyScopes(['*', '*'])).toEqual(['*']);
  });

  it('names an unknown scope, including one smuggling a comma', () => {
    expect(keyScopes(['organization:delete'])).toBe("Unknown scope 'organization:delete'.");
    expect(keyScopes(['organization:read,project:read'])).toBe(
      "Unknown scope 'organization:read,project:read'.",
    );
    expect(keyScopes([''])).toBe("Unknown scope ''.");
  });

  it('refuses `*` with others, and no scope', () => {
    expect(keyScopes(['*', 'project:read'])).toBe("'*' cannot be combined with other scopes.");
    expect(keyScopes([])).toBe('At least one scope is required.');
  });
});

describe('scopeBeyondCaller', () => {
  it('lets a key give what it holds, a write scope covering the read', () => {
    expect(scopeBeyondCaller(['organization:write'], ['organization:read', 'organization:write'])).toBeNull();
    expect(scopeBeyondCaller(['*'], ['*'])).toBeNull();
    expect(scopeBeyondCaller(['*'], ['plugin:write'])).toBeNull();
  });

  it('names the first scope the key does not hold; `*` only from `*`', () => {
    expect(scopeBeyondCaller(['organization:read'], ['organization:read', 'organization:write'])).toBe(
      'organization:write',
    );
    expect(scopeBeyondCaller(['organization:write', 'project:write'], ['*'])).toBe('*');
    expect(scopeBeyondCaller(['organization_member:write'], ['organization:read'])).toBe('organization:read');
  });
});

describe('projectsWithinCaller', () => {
  it('lets an unrestricted key give any projects, or none', () => {
    expect(projectsWithinCaller(null, [])).toBe(true);
    expect(projectsWithinCaller(null, [1, 2])).toBe(true);
  });

  it('lets a key restricted to projects give only a non-empty subset of its own', () => {
    expect(projectsWithinCaller([1, 2], [2])).toBe(true);
    expect(projectsWithinCaller([1, 2], [1, 2])).toBe(true);
    expect(projectsWithinCaller([1, 2], [])).toBe(false);
    expect(projectsWithinCaller([1, 2], [3])).toBe(false);
    expect(projectsWithinCaller([1], [1, 3])).toBe(false);
  });
});
