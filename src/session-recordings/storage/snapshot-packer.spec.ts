import { describe, expect, it } from '@jest/globals';
import { byBytes } from './snapshot-packer.js';

describe('byBytes: a packer pass reads its chunks in pieces', () => {
  const sizes = (pieces: { dataLength: number }[][]) => pieces.map((p) => p.map((c) => c.dataLength));

  it('cuts before the chunk that would take a piece past the limit, in order', () => {
    const chunks = [3, 4, 2, 5, 1, 1].map((dataLength) => ({ dataLength }));
    expect(sizes([...byBytes(chunks, 7)])).toEqual([
      [3, 4],
      [2, 5],
      [1, 1],
    ]);
  });

  it('gives a chunk larger than the limit a piece of its own, and nothing for no chunk', () => {
    const chunks = [2, 10, 3].map((dataLength) => ({ dataLength }));
    expect(sizes([...byBytes(chunks, 4)])).toEqual([[2], [10], [3]]);
    expect([...byBytes([], 4)]).toEqual([]);
  });
});
