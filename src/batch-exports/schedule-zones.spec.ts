import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { scheduleFields } from './batch-export-input-rules.js';
import {
  backfillRange,
  type Cadence,
  dueRuns,
  endIndexAtOrBefore,
  instantOfWall,
  intervalAt,
  isTimeZone,
  zonedSpec,
} from './schedule.js';

const at = (iso: string) => new Date(iso);
const HOUR = 3600_000;

/** The interval ending at or before `iso`, as ISO strings, and its length in hours. */
function intervalEndingBy(cadence: Cadence, iso: string) {
  const k = endIndexAtOrBefore(cadence, at(iso));
  const { start, end } = intervalAt(cadence, k);
  return {
    start: start.toISOString(),
    end: end.toISOString(),
    hours: (end.getTime() - start.getTime()) / HOUR,
  };
}

describe('daily and weekly intervals on a time zone clock', () => {
  const berlinAt9: Cadence = { interval: 'day', timezone: 'Europe/Berlin', intervalOffset: 9 * 3600 };

  it('ends a daily interval at the offset hour in the zone, 23 hours long over the spring change', () => {
    // 2026-03-29: Berlin goes from CET (+1) to CEST (+2) at 02:00.
    expect(intervalEndingBy(berlinAt9, '2026-03-28T12:00:00Z')).toEqual({
      start: '2026-03-27T08:00:00.000Z',
      end: '2026-03-28T08:00:00.000Z',
      hours: 24,
    });
    expect(intervalEndingBy(berlinAt9, '2026-03-29T12:00:00Z')).toEqual({
      start: '2026-03-28T08:00:00.000Z',
      end: '2026-03-29T07:00:00.000Z',
      hours: 23,
    });
    expect(intervalEndingBy(berlinAt9, '2026-03-30T12:00:00Z').hours).toBe(24);
  });

  it('is 25 hours long over the autumn change, and the intervals stay contiguous', () => {
    // 2026-10-25: back from CEST to CET at 03:00.
    const k = endIndexAtOrBefore(berlinAt9, at('2026-10-25T12:00:00Z'));
    const over = intervalAt(berlinAt9, k);
    expect([over.start.toISOString(), over.end.toISOString()]).toEqual([
      '2026-10-24T07:00:00.000Z',
      '2026-10-25T08:00:00.000Z',
    ]);
    expect(intervalAt(berlinAt9, k - 1).end).toEqual(over.start);
    expect(intervalAt(berlinAt9, k + 1).start).toEqual(over.end);
  });

  it('ends weekly intervals on the offset day (0 = Sunday) at the offset hour, 167 hours over a change', () => {
    // Wednesdays at 06:00 New York; 2026-03-08 (a Sunday) is the US spring change.
    const weekly: Cadence = {
      interval: 'week',
      timezone: 'America/New_York',
      intervalOffset: 3 * 86400 + 6 * 3600,
    };
    expect(intervalEndingBy(weekly, '2026-03-12T00:00:00Z')).toEqual({
      start: '2026-03-04T11:00:00.000Z',
      end: '2026-03-11T10:00:00.000Z',
      hours: 167,
    });
    expect(new Date(intervalEndingBy(weekly, '2026-06-01T00:00:00Z').end).getUTCDay()).toBe(3);
  });

  it('reads a skipped wall time with the offset before the change and a repeated one with the offset after', () => {
    const wall = (iso: string) => Date.parse(iso) / 1000;
    // 02:30 does not exist in New York on 2026-03-08: 02:30 EST, i.e. 03:30 EDT (as PostgreSQL reads it).
    expect(instantOfWall('America/New_York', wall('2026-03-08T02:30:00Z')).toISOString()).toBe(
      '2026-03-08T07:30:00.000Z',
    );
    // 01:30 happens twice on 2026-11-01: the second one (EST).
    expect(instantOfWall('America/New_York', wall('2026-11-01T01:30:00Z')).toISOString()).toBe(
      '2026-11-01T06:30:00.000Z',
    );
    expect(instantOfWall('Europe/Berlin', wall('2026-03-29T02:30:00Z')).toISOString()).toBe(
      '2026-03-29T01:30:00.000Z',
    );
  });

  it('schedules each local day once through both changes (no interval lost or repeated)', () => {
    const result = dueRuns(
      {
        interval: berlinAt9,
        createdAt: at('2026-03-27T00:00:00Z'),
        startAt: null,
        endAt: null,
        scheduledThrough: null,
        pauses: [],
      },
      at('2026-03-31T00:00:00Z'),
      100,
    );
    expect(result.runs.map((r) => r.end.toISOString())).toEqual([
      '2026-03-27T08:00:00.000Z',
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
    expect(backfillRange(berlinAt9, at('2026-03-27T00:00:00Z'), at('2026-03-31T00:00:00Z')).count).toBe(4);
  });

  it('keeps hourly and shorter intervals aligned in UTC whatever the zone, and UTC days as before', () => {
    expect(zonedSpec({ interval: 'hour', timezone: 'Asia/Kolkata', intervalOffset: 3600 })).toEqual({
      step: 3600,
      anchor: 0,
      timezone: 'UTC',
    });
    expect(zonedSpec('week')).toEqual({ step: 604800, anchor: 4 * 86400, timezone: 'UTC' });
    expect(zonedSpec('day')).toEqual({ step: 86400, anchor: 0, timezone: 'UTC' });
  });

  it('knows IANA names and refuses the rest', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('+01:00')).toBe(false);
    expect(isTimeZone(3)).toBe(false);
  });
});

describe('scheduleFields (offset_day, offset_hour)', () => {
  const attrOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return (err as ApiError).body.attr;
    }
    return null;
  };

  it('turns PostHog offset fields into interval_offset seconds', () => {
    expect(scheduleFields('day', { offset_hour: 5, timezone: 'Europe/Paris' })).toEqual({
      timezone: 'Europe/Paris',
      intervalOffset: 5 * 3600,
    });
    expect(scheduleFields('week', { offset_day: 0, offset_hour: 23 })).toEqual({
      timezone: null,
      intervalOffset: 23 * 3600,
    });
    // Only the hour: the default day (Monday).
    expect(scheduleFields('week', { offset_hour: 4 }).intervalOffset).toBe(86400 + 4 * 3600);
    expect(scheduleFields('week', {}).intervalOffset).toBeNull();
  });

  it('refuses an offset for an interval it does not apply to, naming the field', () => {
    expect(attrOf(() => scheduleFields('day', { offset_day: 2 }))).toBe('offset_day');
    expect(attrOf(() => scheduleFields('hour', { offset_hour: 2 }))).toBe('offset_hour');
    expect(attrOf(() => scheduleFields('every 15 minutes', { offset_hour: null }))).toBeNull();
  });

  it('keeps the hour from week to day and drops the offset for shorter intervals', () => {
    const weekly = {
      interval: 'week' as const,
      timezone: 'Asia/Tokyo',
      intervalOffset: 2 * 86400 + 7 * 3600,
    };
    expect(scheduleFields('day', {}, weekly)).toEqual({ timezone: 'Asia/Tokyo', intervalOffset: 7 * 3600 });
    expect(scheduleFields('hour', {}, weekly)).toEqual({ timezone: 'Asia/Tokyo', intervalOffset: null });
    expect(scheduleFields('week', { offset_day: 5 }, weekly).intervalOffset).toBe(5 * 86400 + 7 * 3600);
  });
});
