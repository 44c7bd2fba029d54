import { describe, expect, it } from '@jest/globals';
import { type AccessRule, ProjectAccess } from './project-access.js';

const access = (rules: AccessRule[], level = 1, userId = 7) =>
  new ProjectAccess('org', 42, level, 'membership', userId, rules);
const rule = (
  resource: string,
  resourceId: string | null,
  level: AccessRule['level'],
  subject: AccessRule['subject'] = 'default',
): AccessRule => ({ resource, resourceId, level, subject });

describe('ProjectAccess', () => {
  it('gives a member without rules the project at member and every resource at editor', () => {
    const a = access([]);
    expect(a.project).toEqual({ level: 'member', source: 'default' });
    expect(a.visible).toBe(true);
    expect(a.isProjectAdmin).toBe(false);
    expect(a.resource('session_recording')).toEqual({ level: 'editor', source: 'default' });
    expect(a.object('batch_export', 'x', null)).toEqual({ level: 'editor', source: 'default' });
    expect(a.objectListFilter('batch_export')).toBeNull();
  });

  it('gives organization admins and owners full access whatever the rules say', () => {
    for (const level of [8, 15]) {
      const a = access(
        [
          rule('project', '42', 'none'),
          rule('project', '42', 'none', 'member'),
          rule('query', null, 'none', 'member'),
          rule('batch_export', 'e', 'none', 'member'),
        ],
        level,
      );
      expect(a.project).toEqual({ level: 'admin', source: 'organization_admin' });
      expect(a.resource('query')).toEqual({ level: 'manager', source: 'organization_admin' });
      expect(a.object('batch_export', 'e', null).level).toBe('manager');
      expect(a.objectListFilter('batch_export')).toBeNull();
    }
  });

  it('hides the project behind a default none, and everything under it', () => {
    const a = access([rule('project', '42', 'none'), rule('query', null, 'manager', 'member')]);
    expect(a.project).toEqual({ level: 'none', source: 'default' });
    expect(a.visible).toBe(false);
    expect(a.resource('query').level).toBe('none');
    expect(a.object('session_recording_playlist', '1', 7).level).toBe('none');
  });

  it('lets a rule naming the member beat the default, up and down', () => {
    expect(
      access([rule('project', '42', 'none'), rule('project', '42', 'member', 'member')]).project,
    ).toEqual({ level: 'member', source: 'explicit_member' });
    expect(access([rule('project', '42', 'admin'), rule('project', '42', 'none', 'member')]).project).toEqual(
      {
        level: 'none',
        source: 'explicit_member',
      },
    );
    expect(
      access([
        rule('session_recording', null, 'editor'),
        rule('session_recording', null, 'viewer', 'member'),
      ]).resource('session_recording'),
    ).toEqual({ level: 'viewer', source: 'explicit_member' });
  });

  it("takes the highest of the member's and its roles' rules", () => {
    const a = access([
      rule('project', '42', 'none'),
      rule('project', '42', 'member', 'role'),
      rule('project', '42', 'admin', 'role'),
      rule('batch_export', null, 'viewer', 'member'),
      rule('batch_export', null, 'editor', 'role'),
    ]);
    expect(a.project).toEqual({ level: 'admin', source: 'explicit_role' });
    expect(a.isProjectAdmin).toBe(true);
    expect(a.resource('batch_export')).toEqual({ level: 'editor', source: 'explicit_role' });
  });

  it("reads only the project's own project rules", () => {
    expect(access([rule('project', '41', 'none')]).project.level).toBe('member');
  });

  it('gives the creator of an object manager, above a resource at none', () => {
    const a = access([rule('session_recording', null, 'none')]);
    expect(a.object('session_recording_playlist', '5', 7)).toEqual({ level: 'manager', source: 'creator' });
    expect(a.object('session_recording_playlist', '5', 8).level).toBe('none');
  });

  it('lets object rules naming the member decide; the object default yields to a resource at none', () => {
    const a = access([
      rule('session_recording', null, 'none'),
      rule('session_recording_playlist', '1', 'viewer', 'member'),
      rule('session_recording_playlist', '2', 'editor'),
    ]);
    expect(a.object('session_recording_playlist', '1', null)).toEqual({
      level: 'viewer',
      source: 'explicit_member',
    });
    expect(a.object('session_recording_playlist', '2', null).level).toBe('none');
    expect(a.objectListFilter('session_recording_playlist')).toEqual({
      only: ['1'],
      except: [],
      creatorId: 7,
    });
  });

  it("follows the object's default before the resource's level, and hides objects at none from lists", () => {
    const a = access([
      rule('batch_export', null, 'editor'),
      rule('batch_export', 'a', 'none'),
      rule('batch_export', 'b', 'viewer'),
      rule('batch_export', 'c', 'none'),
      rule('batch_export', 'c', 'viewer', 'role'),
    ]);
    expect(a.object('batch_export', 'a', null)).toEqual({ level: 'none', source: 'default' });
    expect(a.object('batch_export', 'b', null)).toEqual({ level: 'viewer', source: 'default' });
    expect(a.object('batch_export', 'c', null)).toEqual({ level: 'viewer', source: 'explicit_role' });
    expect(a.object('batch_export', 'd', null)).toEqual({ level: 'editor', source: 'default' });
    expect(a.objectListFilter('batch_export')).toEqual({ only: null, except: ['a'], creatorId: 7 });
  });

  it('makes a playlist follow the recordings resource', () => {
    const a = access([rule('session_recording', null, 'viewer', 'member')]);
    expect(a.object('session_recording_playlist', '9', null)).toEqual({
      level: 'viewer',
      source: 'explicit_member',
    });
  });
});
