import { describe, expect, it } from '@jest/globals';
import { parseZonedTimestamp } from './timestamps.js';

describe('parseZonedTimestamp', () => {
  it.each([
    ['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T10:00:00.123Z', '2026-11-21T10:00:00.123Z'],
    ['2026-11-21T10:00:00.123456z', '2026-11-21T10:00:00.123Z'],
    ['2026-11-21T10:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21 10:00:00Z', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T12:00:00+02:00', '2026-11-21T10:00:00.000Z'],
    ['2026-11-21T05:30:00-0430', '2026-11-21T10:00:00.000Z'],
    ['2026-11-22T00:30:00+14:00', '2026-11-21T10:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    [' 2026-11-21T10:00:00Z ', '2026-11-21T10:00:00.000Z'],
  ])('reads %j as %s', (value, expected) => {
    expect(parseZonedTimestamp(value)?.toISOString()).toBe(expected);
  });

  it.each([
    '2026-11-21T10:00:00',
    '2026-11-21',
    '2026-11-21T10',
    '2026-02-30T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '2026-11-21T10:60:00Z',
    '2026-11-21T10:00:60Z',
    '2026-11-21T10:00:00+25:00',
    '2026-11-21T10:00:00+02:60',
    '1763719200',
    'yesterday',
    '',
  ])('rejects %j', (value) => {
    expect(parseZonedTimestamp(value)).toBeNull();
  });

  it('rejects non-strings', () => {
    expect(parseZonedTimestamp(1763719200000)).toBeNull();
    expect(parseZonedTimestamp(null)).toBeNull();
    expect(parseZonedTimestamp(new Date())).toBeNull();
  });
});
