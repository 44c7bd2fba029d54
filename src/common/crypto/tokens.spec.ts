import { describe, expect, it } from '@jest/globals';
import { generateToken, randomBase62, randomUrlSafe, sha256Hex } from './tokens.js';

describe('randomBase62', () => {
  it('is 43 characters for 32 bytes (the default)', () => {
    for (let i = 0; i < 200; i++) expect(randomBase62()).toHaveLength(43);
    expect(randomBase62(32)).toHaveLength(43);
  });

  it('has the width that holds any value of the given number of bytes', () => {
    expect(randomBase62(1)).toHaveLength(2); // 255 needs 2 digits
    expect(randomBase62(8)).toHaveLength(11); // 2^64 - 1 needs 11 digits
    expect(randomBase62(16)).toHaveLength(22);
    expect(randomBase62(64)).toHaveLength(86);
  });

  it('uses only base62 characters', () => {
    const all = Array.from({ length: 200 }, () => randomBase62()).join('');
    expect(all).toMatch(/^[0-9A-Za-z]+$/);
    // 8600 characters: every class of the alphabet shows up.
    expect(all).toMatch(/[0-9]/);
    expect(all).toMatch(/[A-Z]/);
    expect(all).toMatch(/[a-z]/);
  });

  it('uses the whole alphabet over many calls', () => {
    const seen = new Set(
      Array.from({ length: 500 }, () => randomBase62())
        .join('')
        .split(''),
    );
    expect(seen.size).toBe(62);
  });

  it('does not repeat across many calls', () => {
    const values = Array.from({ length: 10000 }, () => randomBase62());
    expect(new Set(values).size).toBe(values.length);
  });
});

describe('generateToken', () => {
  it('is the prefix followed by 43 base62 characters', () => {
    const token = generateToken('phx_');
    expect(token).toMatch(/^phx_[0-9A-Za-z]{43}$/);
  });

  it('uses the requested number of bytes', () => {
    expect(generateToken('k_', 16)).toMatch(/^k_[0-9A-Za-z]{22}$/);
  });

  it('differs on every call', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => generateToken('phx_')));
    expect(tokens.size).toBe(1000);
  });
});

describe('sha256Hex', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    [
      'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ],
  ])('hashes %j to the known digest', (input, digest) => {
    expect(sha256Hex(input)).toBe(digest);
  });

  it('hashes the UTF-8 encoding of the string as lower-case hex', () => {
    // SHA-256 of C3 A9 ("é" in UTF-8), not of the Latin-1 byte E9 (de2e331d…).
    expect(sha256Hex('é')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
    expect(sha256Hex('phx_abc')).toBe('5e26f9f4aa7f98042e671fbaa15196a12513a2635898590230de0c25e658279e');
  });
});

describe('randomUrlSafe', () => {
  it.each([1, 32, 43, 100])('is exactly %d URL-safe characters', (length) => {
    const value = randomUrlSafe(length);
    expect(value).toHaveLength(length);
    expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('does not repeat', () => {
    expect(new Set(Array.from({ length: 1000 }, () => randomUrlSafe(32))).size).toBe(1000);
  });
});
