import { describe, expect, it } from '@jest/globals';
import { formatClock, formatDuration, isWebUrl } from './format.js';

describe('formatClock', () => {
  it.each([
    [0, '0:00'],
    [-5, '0:00'],
    [999, '0:00'],
    [61_000, '1:01'],
    [3_599_999, '59:59'],
    [3_723_000, '1:02:03'],
  ])('%p ms → %p', (ms, text) => expect(formatClock(ms)).toBe(text));
});

describe('formatDuration', () => {
  it.each([
    [0, '0 s'],
    [45.4, '45 s'],
    [60, '1 min'],
    [3723, '1 h 2 min 3 s'],
  ])('%p s → %p', (s, text) => expect(formatDuration(s)).toBe(text));
});

describe('isWebUrl', () => {
  it('accepts http and https only', () => {
    expect(isWebUrl('https://example.com/a?b=1')).toBe(true);
    expect(isWebUrl('http://127.0.0.1:8000/')).toBe(true);
    expect(isWebUrl('javascript:alert(1)')).toBe(false);
    expect(isWebUrl('data:text/html,x')).toBe(false);
    expect(isWebUrl('/relative')).toBe(false);
    expect(isWebUrl(null)).toBe(false);
  });
});
