import { randomInt } from 'node:crypto';

export const SLUG_MAX_LENGTH = 48;
const SUFFIX_LENGTH = 4;
const FOLDED: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', þ: 'th' };
const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The slug of an organization name (docs/decisions.md §4): lower-case ASCII letters and digits joined by single
 * hyphens, accents folded, at most 48 characters; "organization" when nothing usable is left.
 */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[ßæœøłđþ]/g, (c) => FOLDED[c])
    // Letters and digits of other scripts have no ASCII form: dropped, not turned into separators.
    .replace(/[^\p{ASCII}]/gu, (c) => (/[\p{L}\p{N}\p{M}]/u.test(c) ? '' : '-'))
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/-+$/g, '');
  return slug || 'organization';
}

/** The slug with a random `-xxxx` suffix, still within the maximum length (used after a clash). */
export function withRandomSuffix(slug: string, random: (max: number) => number = randomInt): string {
  const base = slug.slice(0, SLUG_MAX_LENGTH - SUFFIX_LENGTH - 1).replace(/-+$/g, '');
  let suffix = '';
  for (let i = 0; i < SUFFIX_LENGTH; i++) suffix += SUFFIX_ALPHABET[random(SUFFIX_ALPHABET.length)];
  return `${base}-${suffix}`;
}
