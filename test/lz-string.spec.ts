import { describe, expect, it } from '@jest/globals';
import { compressToBase64 } from './support/lz-string.js';
import { decompressFromBase64, Lz64FormatError, Lz64TooLargeError } from '../src/ingest/lz-string.js';

/**
 * The LZ-string decoder of `compression=lz64` bodies.
 *
 * @engine-independent: no database (run once, not again on a second engine).
 */
const MAX = 1 << 20;

describe('decompressFromBase64 (LZ-string, compression=lz64)', () => {
  it("decodes the JavaScript library's own output", () => {
    // Published vectors of lz-string's compressToBase64 (an ASCII text, and one with 16-bit characters).
    expect(decompressFromBase64('BYUwNmD2AEDukCcwBMg=', MAX)).toBe('hello world');
    expect(
      decompressFromBase64('r6ABsK6KaAD2aLCADWBfgBPQ9oCAlAZAvgDobEARlB4QAEOAjAUxAGd4BL5AZ4BMBPAQiA==', MAX),
    ).toBe('Žluťoučký kůň úpěl ďábelské ódy!');
  });

  it('matches the test compressor on those vectors, and round-trips JSON, repetition and astral characters', () => {
    expect(compressToBase64('hello world')).toBe('BYUwNmD2AEDukCcwBMg=');
    for (const text of [
      JSON.stringify([{ event: '$pageview', properties: { token: 'phc_x', $current_url: 'https://a/' } }]),
      'a'.repeat(10_000),
      'abcabcabcabcabcabc'.repeat(50),
      '😀 “quotes” \u0000 \uffff'.repeat(20),
      'x',
    ]) {
      expect(decompressFromBase64(compressToBase64(text), MAX)).toBe(text);
    }
  });

  it('takes a space for + (a form value whose + was not escaped) and ignores line breaks', () => {
    const texts = Array.from({ length: 200 }, (_, i) => `{"event":"e${i}","distinct_id":"user-${i * 7919}"}`);
    const text = texts.find((t) => compressToBase64(t).includes('+')) as string;
    const encoded = compressToBase64(text);
    expect(encoded).toContain('+');
    expect(decompressFromBase64(encoded.replace(/\+/g, ' ').replace(/(.{10})/g, '$1\n'), MAX)).toBe(text);
  });

  it('stops past the output limit, however small the input (a bomb)', () => {
    const bomb = compressToBase64('A'.repeat(1_000_000));
    expect(bomb.length).toBeLessThan(16_000);
    expect(() => decompressFromBase64(bomb, 1024)).toThrow(Lz64TooLargeError);
    expect(decompressFromBase64(compressToBase64('A'.repeat(1024)), 1024)).toHaveLength(1024);
    expect(() => decompressFromBase64(compressToBase64('A'.repeat(1025)), 1024)).toThrow(Lz64TooLargeError);
  });

  it('refuses malformed data rather than returning part of it', () => {
    const good = compressToBase64('hello world, hello world');
    for (const bad of ['', '!!!!', good.slice(0, 6), 'é' + good, '////////////']) {
      expect(() => decompressFromBase64(bad, MAX)).toThrow(Lz64FormatError);
    }
  });
});
