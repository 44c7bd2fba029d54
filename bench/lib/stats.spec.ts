import { describe, expect, it } from '@jest/globals';
import { mean, meanIfEvery } from './stats.js';

describe('bench stats', () => {
  it('means values, 0 for none', () => {
    expect(mean([1, 2, 6])).toBe(3);
    expect(mean([])).toBe(0);
  });

  it('means an optional figure only when every round has it', () => {
    type Round = { cpu: number; v8?: number };
    const all: Round[] = [
      { cpu: 1, v8: 0.5 },
      { cpu: 3, v8: 1.5 },
    ];
    expect(meanIfEvery(all, 'v8')).toEqual({ v8: 1 });
    expect(meanIfEvery([...all, { cpu: 2 }], 'v8')).toEqual({});
    expect(meanIfEvery([] as Round[], 'v8')).toEqual({});
  });
});
