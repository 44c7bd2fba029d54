import { describe, expect, it } from '@jest/globals';
import { mergedConfig, maskedConfig } from '../configs/plugin-configs.service.js';
import { SECRET_MASK } from '../configs/dto/plugin-config.dto.js';
import { canonicalJson, diffFields, sameJson } from './plugin-changes.js';

describe('sameJson', () => {
  it('ignores object key order but not array order', () => {
    expect(sameJson({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });
});

describe('diffFields', () => {
  it('lists created, changed and deleted fields, leaving out unchanged ones', () => {
    expect(diffFields({ name: 'a', tag: '1', icon: null }, { name: 'b', tag: '1', icon: null })).toEqual([
      { field: 'name', action: 'changed', before: 'a', after: 'b' },
    ]);
    expect(diffFields(null, { name: 'a' })).toEqual([
      { field: 'name', action: 'created', before: null, after: 'a' },
    ]);
    expect(diffFields({ name: 'a' }, null)).toEqual([
      { field: 'name', action: 'deleted', before: 'a', after: null },
    ]);
    expect(
      diffFields(
        { capabilities: { methods: ['x'], jobs: [] } },
        { capabilities: { jobs: [], methods: ['x'] } },
      ),
    ).toEqual([]);
  });
});

describe('plugin config secrets', () => {
  const schema = [{ key: 'apiKey', secret: true }, { key: 'region' }];
  it('masks secret keys that hold a value', () => {
    expect(maskedConfig({ apiKey: 's3cr3t', region: 'eu' }, schema)).toEqual({
      apiKey: SECRET_MASK,
      region: 'eu',
    });
    expect(maskedConfig({ apiKey: '', region: 'eu' }, schema)).toEqual({ apiKey: '', region: 'eu' });
    expect(maskedConfig({ apiKey: 's3cr3t' }, {})).toEqual({ apiKey: 's3cr3t' });
  });
  it('keeps secrets left out, null or masked on update, and takes new ones', () => {
    const current = { apiKey: 'old', region: 'eu' };
    expect(mergedConfig(current, { region: 'us' }, schema)).toEqual({ apiKey: 'old', region: 'us' });
    expect(mergedConfig(current, { apiKey: null }, schema)).toEqual({ apiKey: 'old' });
    expect(mergedConfig(current, { apiKey: SECRET_MASK }, schema)).toEqual({ apiKey: 'old' });
    expect(mergedConfig(current, { apiKey: 'new' }, schema)).toEqual({ apiKey: 'new' });
    expect(mergedConfig({}, { region: 'us' }, schema)).toEqual({ region: 'us' });
  });
});
