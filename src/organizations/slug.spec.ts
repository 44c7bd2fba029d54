import { describe, expect, it } from '@jest/globals';
import { SLUG_MAX_LENGTH, slugify, withRandomSuffix } from './slug.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A random function returning `values` in turn, recording the bound it was called with. */
function sequence(...values: number[]): { random: (max: number) => number; bounds: number[] } {
  const bounds: number[] = [];
  let i = 0;
  return {
    bounds,
    random: (max) => {
      bounds.push(max);
      return values[i++ % values.length];
    },
  };
}

describe('slugify', () => {
  it.each([
    ['Acme', 'acme'],
    ['Acme Corp', 'acme-corp'],
    ['ACME  Corp', 'acme-corp'],
    ['Hello, World!', 'hello-world'],
    ['a & b / c', 'a-b-c'],
    ['foo---bar', 'foo-bar'],
    ['foo_bar.baz', 'foo-bar-baz'],
    ['  --Acme--  ', 'acme'],
    ['!!!Acme!!!', 'acme'],
    ['Team 42', 'team-42'],
    ['2024', '2024'],
  ])('slugifies %j as %j', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });

  it.each([
    ['Café Crème', 'cafe-creme'],
    ['Ångström Åb', 'angstrom-ab'],
    ['Señor Niño', 'senor-nino'],
    ['Über Zoë', 'uber-zoe'],
    ['Z\u0301ebra', 'zebra'],
    ['ﬁne', 'fine'],
  ])('folds accents of %j into %j', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });

  it.each(['', '   ', '!!!', '日本語', '—', '🙂🙂'])('falls back to "organization" for %j', (name) => {
    expect(slugify(name)).toBe('organization');
  });

  it('keeps at most 48 characters', () => {
    expect(SLUG_MAX_LENGTH).toBe(48);
    expect(slugify('a'.repeat(64))).toBe('a'.repeat(48));
    expect(slugify('x'.repeat(48))).toBe('x'.repeat(48));
  });

  it('does not end on a hyphen after truncation', () => {
    const name = `${'a'.repeat(47)} bcd`;
    expect(slugify(name)).toBe('a'.repeat(47));
    const words = 'word '.repeat(20);
    const slug = slugify(words);
    expect(slug.length).toBeLessThanOrEqual(48);
    expect(slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(slug).toBe(`${'word-'.repeat(9)}wor`);
    expect(slugify(`${'word '.repeat(9)}x`.padEnd(60, '!'))).toBe(`${'word-'.repeat(9)}x`);
  });

  it('always produces lower-case letters and digits joined by single hyphens', () => {
    for (const name of ['Ünïcödé  Nàmé!!', '--a--b--', 'A_B_C', 'x'.repeat(100), 'É'.repeat(60)]) {
      const slug = slugify(name);
      expect(slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(slug.length).toBeLessThanOrEqual(48);
    }
  });
});

describe('withRandomSuffix', () => {
  it('appends four characters drawn from a-z0-9 with the injected random function', () => {
    const { random, bounds } = sequence(0, 25, 26, 35);
    expect(withRandomSuffix('acme', random)).toBe('acme-az09');
    expect(bounds).toEqual([36, 36, 36, 36]);
  });

  it('is deterministic for the same random values', () => {
    expect(withRandomSuffix('acme', sequence(1, 2, 3, 4).random)).toBe(
      withRandomSuffix('acme', sequence(1, 2, 3, 4).random),
    );
    expect(withRandomSuffix('acme', sequence(1, 2, 3, 4).random)).toBe('acme-bcde');
  });

  it('truncates a long slug so that the result has at most 48 characters', () => {
    const result = withRandomSuffix('a'.repeat(48), sequence(2).random);
    expect(result).toBe(`${'a'.repeat(43)}-cccc`);
    expect(result).toHaveLength(48);
  });

  it('leaves no hyphen before the separator when truncation ends on one', () => {
    const slug = `${'a'.repeat(42)}-bbbbb`; // 48 characters; the first 43 end with a hyphen
    const result = withRandomSuffix(slug, sequence(0).random);
    expect(result).toBe(`${'a'.repeat(42)}-aaaa`);
    expect(result).not.toContain('--');
  });

  it('produces a valid slug within the limit for any length of input', () => {
    for (let n = 1; n <= 60; n++) {
      const slug = slugify(`ab-${'c'.repeat(n)}`);
      const result = withRandomSuffix(slug, sequence(7, 30).random);
      expect(result.length).toBeLessThanOrEqual(SLUG_MAX_LENGTH);
      expect(result).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*-h4h4$/);
    }
  });

  it('uses crypto randomness by default', () => {
    const results = new Set(Array.from({ length: 50 }, () => withRandomSuffix('acme')));
    for (const result of results) expect(result).toMatch(new RegExp(`^acme-[${ALPHABET}]{4}$`));
    expect(results.size).toBeGreaterThan(45);
  });
});

describe('slugify: letters without an ASCII decomposition', () => {
  it.each([
    ['Größe', 'grosse'],
    ['Łódź Ørsted', 'lodz-orsted'],
    ['Привет Acme', 'acme'],
    ['東京', 'organization'],
    ['Café—Bar', 'cafe-bar'],
  ])('%s → %s', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });
});
