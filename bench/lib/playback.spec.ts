import { describe, expect, it } from '@jest/globals';
import { playerRanges } from './playback.js';

describe('playerRanges', () => {
  it('reads the first source alone, then ranges of 2, 4, 8 and at most 16, as the player does', () => {
    const sources = Array.from({ length: 50 }, (_, i) => i);
    expect(playerRanges(sources).map((r) => r.length)).toEqual([1, 2, 4, 8, 16, 16, 3]);
    expect(playerRanges(sources).flat()).toEqual(sources);
    expect(playerRanges([])).toEqual([]);
  });
});
