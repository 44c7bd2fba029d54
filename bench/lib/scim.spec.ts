import { describe, expect, it } from '@jest/globals';
import { formatScimTable, quantile, summarizeSteps } from './scim.js';

describe('quantile', () => {
  it('takes the nearest rank', () => {
    const values = [5, 1, 4, 2, 3];
    expect(quantile(values, 0.5)).toBe(3);
    expect(quantile(values, 0.99)).toBe(5);
    expect(quantile(values, 0)).toBe(1);
    expect(quantile([], 0.5)).toBe(0);
    expect(
      quantile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.99,
      ),
    ).toBe(99);
  });
});

describe('summarizeSteps', () => {
  it('gives each step its count, p50, p99 and max in the order the steps ran', () => {
    const steps = summarizeSteps(
      new Map([
        ['POST /Users (201)', [30.04, 10, 20]],
        ['GET /Groups', [4.26]],
      ]),
    );
    expect(steps).toEqual([
      { step: 'POST /Users (201)', samples: 3, p50: 20, p99: 30, max: 30 },
      { step: 'GET /Groups', samples: 1, p50: 4.3, p99: 4.3, max: 4.3 },
    ]);
    expect(formatScimTable({ iterations: 3, steps })).toContain('| POST /Users (201) | 20 | 30 | 30 |');
  });
});
