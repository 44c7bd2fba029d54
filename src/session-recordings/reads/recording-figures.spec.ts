import { describe, expect, it } from '@jest/globals';
import { activityScore, isExpired, retention, retentionCutoff, wholeSeconds } from './recording-figures.js';

describe('wholeSeconds', () => {
  it('counts second boundaries for the duration and truncates the active and inactive seconds', () => {
    // 12.345 s from 1.000 to 13.345: 12 boundaries; 3.2 s active → 3; 12 − 3.2 = 8.8 → 8.
    expect(wholeSeconds(1_000, 13_345, 3_200)).toEqual({
      recording_duration: 12,
      active_seconds: 3,
      inactive_seconds: 8,
    });
  });

  it('counts boundaries, not elapsed time: 0.2 s across a second boundary is 1, 1.8 s within two is 1', () => {
    expect(wholeSeconds(1_900, 2_100, 0).recording_duration).toBe(1);
    expect(wholeSeconds(1_100, 2_900, 0).recording_duration).toBe(1);
    expect(wholeSeconds(1_000, 1_999, 0).recording_duration).toBe(0);
  });

  it('gives integers for any millisecond values', () => {
    const figures = wholeSeconds(1_763_719_200_123, 1_763_719_307_660, 50_537);
    for (const value of Object.values(figures)) expect(Number.isInteger(value)).toBe(true);
    expect(figures).toEqual({ recording_duration: 107, active_seconds: 50, inactive_seconds: 56 });
  });

  it('never reports negative inactive time (active segments of concurrent tabs can exceed the span)', () => {
    expect(wholeSeconds(1_000, 1_000, 1)).toEqual({
      recording_duration: 0,
      active_seconds: 0,
      inactive_seconds: 0,
    });
    expect(wholeSeconds(0, 10_000, 25_000).inactive_seconds).toBe(0);
  });
});

describe('activityScore', () => {
  const counts = {
    activeMs: 0,
    durationSeconds: 0,
    clickCount: 0,
    keypressCount: 0,
    mouseActivityCount: 0,
    consoleLogCount: 0,
    consoleWarnCount: 0,
    consoleErrorCount: 0,
  };

  it('is intent over activity in percent, with two decimals', () => {
    // (10.5 + 3 + 2 + 1) / (20 + 60 + 1 + 4 + 2) * 100 = 16.5 / 87 * 100 = 18.9655… → 18.97
    expect(
      activityScore({
        ...counts,
        activeMs: 10_500,
        clickCount: 3,
        keypressCount: 2,
        consoleErrorCount: 1,
        mouseActivityCount: 20,
        durationSeconds: 60,
        consoleLogCount: 4,
        consoleWarnCount: 2,
      }),
    ).toBe(18.97);
  });

  it('is clamped to 100', () => {
    expect(activityScore({ ...counts, activeMs: 5_000, clickCount: 50, durationSeconds: 5 })).toBe(100);
  });

  it('is null when there is nothing to divide by', () => {
    expect(activityScore(counts)).toBeNull();
    expect(activityScore({ ...counts, activeMs: 1 })).toBeNull();
  });
});

describe('retention', () => {
  it('expires retention days after the start of the UTC day it started; ttl counts days from today', () => {
    const start = Date.parse('2026-11-21T22:30:00.000Z');
    expect(retention(start, Date.parse('2026-11-22T01:00:00.000Z'), 30)).toEqual({
      retention_period_days: 30,
      expiry_time: '2026-12-21T00:00:00.000Z',
      recording_ttl: 29,
    });
    expect(retention(start, start, 7).recording_ttl).toBe(7);
  });

  it('goes negative once expired', () => {
    const start = Date.parse('2026-01-01T12:00:00.000Z');
    expect(retention(start, Date.parse('2026-01-05T00:00:00.000Z'), 1).recording_ttl).toBe(-3);
  });
});

describe('retentionCutoff and isExpired', () => {
  const DAY = 24 * 60 * 60 * 1000;

  it('is the start of today (UTC) minus retention days - 1', () => {
    const now = Date.parse('2026-11-21T12:00:00.000Z');
    expect(retentionCutoff(now, 1).toISOString()).toBe('2026-11-21T00:00:00.000Z');
    expect(retentionCutoff(now, 30).toISOString()).toBe('2026-10-23T00:00:00.000Z');
    expect(retentionCutoff(Date.parse('2026-11-21T00:00:00.000Z'), 2).toISOString()).toBe(
      '2026-11-20T00:00:00.000Z',
    );
  });

  it('agrees with expiry_time: expired exactly when expiry_time <= now', () => {
    const starts = [
      Date.parse('2026-10-22T23:59:59.999Z'),
      Date.parse('2026-10-23T00:00:00.000Z'),
      Date.parse('2026-10-23T12:00:00.000Z'),
      Date.parse('2026-11-20T23:59:59.999Z'),
      Date.parse('2026-11-21T00:00:00.000Z'),
    ];
    const nows = [
      Date.parse('2026-11-21T00:00:00.000Z'),
      Date.parse('2026-11-21T23:59:59.999Z'),
      Date.parse('2026-11-22T00:00:00.000Z'),
    ];
    for (const days of [1, 2, 30]) {
      for (const start of starts) {
        for (const now of nows) {
          const expiry = Date.parse(retention(start, now, days).expiry_time);
          expect({ days, start, now, expired: isExpired(start, now, days) }).toEqual({
            days,
            start,
            now,
            expired: expiry <= now,
          });
        }
      }
    }
  });

  it('keeps a recording of today with 1 day, and expires it at the next midnight', () => {
    const start = Date.parse('2026-11-21T23:00:00.000Z');
    expect(isExpired(start, start + 59 * 60 * 1000, 1)).toBe(false);
    expect(isExpired(start, Date.parse('2026-11-22T00:00:00.000Z'), 1)).toBe(true);
    expect(isExpired(start, start + 29 * DAY, 30)).toBe(false);
  });
});
