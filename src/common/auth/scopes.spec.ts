import '../../features.js';
import { describe, expect, it } from '@jest/globals';
import {
  ALL_SCOPES,
  grants,
  isScope,
  KNOWN_SCOPES,
  missingScope,
  parseScopeList,
  READ_SCOPES,
  SCOPE_OBJECTS,
  WRITE_SCOPES,
} from './scopes.js';

describe('scope registry', () => {
  it('has exactly one read and one write scope per object', () => {
    for (const object of SCOPE_OBJECTS) {
      expect(READ_SCOPES.filter((s) => s.startsWith(`${object}:`))).toEqual([`${object}:read`]);
      expect(WRITE_SCOPES.filter((s) => s.startsWith(`${object}:`))).toEqual([`${object}:write`]);
    }
    expect(READ_SCOPES).toHaveLength(SCOPE_OBJECTS.length);
    expect(WRITE_SCOPES).toHaveLength(SCOPE_OBJECTS.length);
  });

  it('defines KNOWN_SCOPES as READ ∪ WRITE with no overlap and no duplicates', () => {
    const reads = new Set<string>(READ_SCOPES);
    const writes = new Set<string>(WRITE_SCOPES);
    expect([...reads].filter((s) => writes.has(s))).toEqual([]);
    expect(new Set(KNOWN_SCOPES).size).toBe(KNOWN_SCOPES.length);
    expect([...KNOWN_SCOPES].sort()).toEqual([...reads, ...writes].sort());
    expect(KNOWN_SCOPES).toHaveLength(2 * SCOPE_OBJECTS.length);
  });

  it('includes the objects the decisions name, project among them', () => {
    expect(SCOPE_OBJECTS).toEqual(
      expect.arrayContaining([
        'organization',
        'organization_member',
        'project',
        'batch_export',
        'plugin',
        'session_recording',
        'sharing_configuration',
      ]),
    );
  });

  it('recognises only registered scopes', () => {
    expect(isScope('project:read')).toBe(true);
    expect(isScope('plugin:write')).toBe(true);
    expect(isScope('*')).toBe(false);
    expect(isScope('project:delete')).toBe(false);
    expect(isScope('projects:read')).toBe(false);
    expect(isScope('Project:read')).toBe(false);
  });
});

describe('grants', () => {
  it('grants a scope that is held', () => {
    expect(grants(['organization:read'], 'organization:read')).toBe(true);
    expect(grants(['plugin:write'], 'plugin:write')).toBe(true);
  });

  it('lets a write scope grant the read of the same object', () => {
    expect(grants(['organization:write'], 'organization:read')).toBe(true);
    expect(grants(['batch_export:write'], 'batch_export:read')).toBe(true);
  });

  it('never lets a read scope grant the write', () => {
    expect(grants(['organization:read'], 'organization:write')).toBe(false);
  });

  it('does not let a write scope grant another object, even one with a common prefix', () => {
    expect(grants(['organization:write'], 'organization_member:read')).toBe(false);
    expect(grants(['organization:write'], 'organization_member:write')).toBe(false);
    expect(grants(['organization_member:write'], 'organization:read')).toBe(false);
    expect(grants(['project:write'], 'plugin:read')).toBe(false);
  });

  it('grants everything to `*`', () => {
    for (const scope of KNOWN_SCOPES) expect(grants([ALL_SCOPES], scope)).toBe(true);
    expect(grants(['project:read', '*'], 'sharing_configuration:write')).toBe(true);
  });

  it('grants nothing to an empty list or unknown strings', () => {
    expect(grants([], 'project:read')).toBe(false);
    expect(grants(['project', 'read', 'project:*', '**'], 'project:read')).toBe(false);
  });
});

describe('missingScope', () => {
  it('returns null when every required scope is covered', () => {
    expect(
      missingScope(['project:write', 'organization:read'], ['project:read', 'organization:read']),
    ).toBeNull();
    expect(missingScope(['*'], ['plugin:write', 'project:write'])).toBeNull();
    expect(missingScope([], [])).toBeNull();
  });

  it('returns the first required scope that is not covered', () => {
    expect(missingScope(['organization:read'], ['organization:read', 'project:read', 'plugin:read'])).toBe(
      'project:read',
    );
    expect(missingScope(['project:read'], ['project:write'])).toBe('project:write');
    expect(missingScope([], ['plugin:read', 'project:read'])).toBe('plugin:read');
  });
});

describe('parseScopeList', () => {
  it('accepts `*` alone, with surrounding space', () => {
    expect(parseScopeList('*')).toEqual(['*']);
    expect(parseScopeList(' * ')).toEqual(['*']);
  });

  it('trims, deduplicates and sorts a comma list', () => {
    expect(parseScopeList(' project:write, organization:read ,project:write,,organization:read')).toEqual([
      'organization:read',
      'project:write',
    ]);
  });

  it('accepts every known scope', () => {
    expect(parseScopeList(KNOWN_SCOPES.join(','))).toEqual([...KNOWN_SCOPES].sort());
  });

  it('rejects an unknown scope, naming it', () => {
    expect(() => parseScopeList('project:read,project:delete')).toThrow("unknown scope 'project:delete'");
    expect(() => parseScopeList('organisation:read')).toThrow(
      /^unknown scope 'organisation:read' \(known: \*, /,
    );
  });

  it('names the first unknown scope', () => {
    expect(() => parseScopeList('foo,bar')).toThrow("unknown scope 'foo'");
  });

  it('rejects `*` combined with other scopes', () => {
    expect(() => parseScopeList('*,project:read')).toThrow("'*' cannot be combined with other scopes");
    expect(() => parseScopeList('project:read, *')).toThrow("'*' cannot be combined with other scopes");
  });

  it.each(['', ' ', ',', ' , ,'])('rejects the empty list %j', (input) => {
    expect(() => parseScopeList(input)).toThrow('at least one scope is required');
  });
});

describe('parseScopeList with a repeated wildcard', () => {
  it("'*,*' is just '*'", () => {
    expect(parseScopeList('*,*')).toEqual(['*']);
    expect(() => parseScopeList('*,organization:read')).toThrow("'*' cannot be combined with other scopes");
  });
});
