import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { HOG_FUNCTION_MIGRATABLE_URLS } from './hog-function-migrations.js';
import { BUNDLED_CATALOG, findEntry, parseCatalog } from './plugin-catalog.js';
import { normaliseUrl } from '../rules/plugin-rules.js';

describe('parseCatalog', () => {
  it('keeps extra keys and fills the optional ones with null', () => {
    expect(parseCatalog([{ name: 'A', url: 'https://x.y/a', maintainer: 'me' }])).toEqual({
      entries: [
        {
          name: 'A',
          url: 'https://x.y/a',
          description: null,
          icon: null,
          latest_tag: null,
          maintainer: 'me',
        },
      ],
    });
  });
  it.each([
    [{}, 'expected a JSON array of plugins'],
    [[1], 'entry 0 is not an object'],
    [[{ url: 'https://x.y' }], 'entry 0 has no valid "name"'],
    [[{ name: 'A', url: 'https://x.y' }, { name: 'B' }], 'entry 1 has no valid http(s) "url"'],
    [[{ name: 'A', url: 'x.y' }], 'entry 0 has no valid http(s) "url"'],
    [[{ name: 'A', url: 'https://x.y', latest_tag: 3 }], 'entry 0 has an invalid "latest_tag"'],
    [[{ name: 'A', url: 'https://x.y', icon: {} }], 'entry 0 has an invalid "icon"'],
  ])('refuses %j', (document, problem) => {
    expect(parseCatalog(document)).toEqual({ problem });
  });
});

describe('findEntry', () => {
  const entries = [
    { name: 'A', url: 'https://github.com/acme/a/', description: null, icon: null, latest_tag: '1.0.0' },
  ];
  it('compares normalised urls', () => {
    expect(findEntry(entries, 'https://GITHUB.com/acme/a')?.name).toBe('A');
    expect(findEntry(entries, 'https://github.com/acme/b')).toBeNull();
    expect(findEntry(entries, null)).toBeNull();
  });
});

describe('the catalog shipped with the service', () => {
  const result = parseCatalog(JSON.parse(readFileSync(BUNDLED_CATALOG, 'utf8')));
  it('is valid, with unique urls and a latest_tag for every plugin', () => {
    expect('entries' in result).toBe(true);
    const entries = 'entries' in result ? result.entries : [];
    expect(entries.length).toBeGreaterThan(3);
    expect(new Set(entries.map((e) => normaliseUrl(e.url))).size).toBe(entries.length);
    for (const entry of entries) expect(entry.latest_tag).toMatch(/^\d+\.\d+\.\d+$/);
  });
  it('lists only urls in their normalised form, as records store them', () => {
    const entries = 'entries' in result ? result.entries : [];
    for (const entry of entries) expect(normaliseUrl(entry.url)).toBe(entry.url);
    for (const url of HOG_FUNCTION_MIGRATABLE_URLS) expect(normaliseUrl(url)).toBe(url);
  });
});
