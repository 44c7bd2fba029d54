import { describe, expect, it } from '@jest/globals';
import { globToLike, MemberAccess, reaches, type RuleRow } from './access-rules.js';

const PROJECT = 7;

describe('MemberAccess', () => {
  it('gives organization admins and owners everything, whatever the rules', () => {
    const access = new MemberAccess(8, PROJECT, [['project', '7', 'none', 'member']]);
    expect(access.project).toBe('admin');
    expect(access.resource('session_recording')).toBe('manager');
    expect(access.objectFilter('batch_export', 'batch_export')).toBeNull();
  });

  it('lets the member and role rules decide together, the highest winning, over the default', () => {
    const rules: RuleRow[] = [
      ['project', '7', 'none', 'default'],
      ['project', '7', 'member', 'role'],
      ['session_recording', null, 'viewer', 'default'],
      ['session_recording', null, 'none', 'member'],
      ['session_recording', null, 'editor', 'role'],
      ['query', null, 'none', 'default'],
    ];
    const access = new MemberAccess(1, PROJECT, rules);
    expect(access.project).toBe('member');
    expect(access.resource('session_recording')).toBe('editor');
    expect(access.resource('query')).toBe('none');
    expect(access.resource('plugin')).toBe('editor');
  });

  it('puts everything at none under a project at none, and reads only the rules of its own project', () => {
    const hidden = new MemberAccess(1, PROJECT, [['project', '7', 'none', 'member']]);
    expect(hidden.project).toBe('none');
    expect(hidden.resource('batch_export')).toBe('none');
    expect(new MemberAccess(1, PROJECT, [['project', '8', 'none', 'member']]).project).toBe('member');
  });

  it('hides the objects whose own rules say none, and keeps only those granted under a resource at none', () => {
    const rules: RuleRow[] = [
      ['batch_export', 'a', 'none', 'member'],
      ['batch_export', 'b', 'viewer', 'default'],
      ['batch_export', 'b', 'editor', 'member'],
      ['batch_export', 'c', 'none', 'default'],
    ];
    expect(new MemberAccess(1, PROJECT, rules).objectFilter('batch_export', 'batch_export')).toEqual({
      only: null,
      except: ['a', 'c'],
    });
    const under = new MemberAccess(1, PROJECT, [...rules, ['batch_export', null, 'none', 'default']]);
    expect(under.objectFilter('batch_export', 'batch_export')).toEqual({ only: ['b'], except: [] });
    expect(new MemberAccess(1, PROJECT, []).objectFilter('batch_export', 'batch_export')).toBeNull();
  });
});

describe('reaches', () => {
  it('orders the resource levels', () => {
    expect(reaches('viewer', 'viewer')).toBe(true);
    expect(reaches('viewer', 'editor')).toBe(false);
    expect(reaches('manager', 'editor')).toBe(true);
    expect(reaches('none', 'viewer')).toBe(false);
  });
});

describe('globToLike', () => {
  it('turns * into % (runs of them into one) and escapes the LIKE wildcards', () => {
    expect(globToLike('https://app.bench.test/page/999')).toBe('https://app.bench.test/page/999');
    expect(globToLike('https://x.test/**/a_b%c\\')).toBe('https://x.test/%/a\\_b\\%c\\\\');
  });
});
