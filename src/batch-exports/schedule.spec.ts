import { describe, expect, it } from '@jest/globals';
import {
  alignedEndAtOrBefore,
  backfillRange,
  cadenceOf,
  dueRuns,
  fellWhilePaused,
  INTERVAL_SPECS,
  intervalAt,
  INTERVALS,
  type Interval,
  type ScheduleState,
} from './schedule.js';

const at = (iso: string) => new Date(iso);
const iso = (d: Date) => d.toISOString();
const HOUR = 3600_000;
const MINUTE = 60_000;

/** A state of an export created at `createdAt`, with nothing else set. */
const state = (interval: Interval, createdAt: string, extra: Partial<ScheduleState> = {}): ScheduleState => ({
  interval,
  createdAt: at(createdAt),
  startAt: null,
  endAt: null,
  scheduledThrough: null,
  pauses: [],
  ...extra,
});

const ends = (result: { runs: { end: Date }[] }) => result.runs.map((r) => iso(r.end));

describe('cadenceOf', () => {
  it('reads every interval once as a cadence', () => {
    expect(INTERVALS.map(cadenceOf)).toEqual([
      'every hour',
      'every day',
      'every week',
      'every 5 minutes',
      'every 15 minutes',
    ]);
  });
});

describe('interval alignment (UTC)', () => {
  it.each([
    ['hour', '2026-11-21T10:37:12.345Z', '2026-11-21T10:00:00.000Z'],
    ['day', '2026-11-21T10:37:12.345Z', '2026-11-21T00:00:00.000Z'],
    // 2026-11-21 is a Saturday: the week started on Monday the 16th.
    ['week', '2026-11-21T10:37:12.345Z', '2026-11-16T00:00:00.000Z'],
    ['every 5 minutes', '2026-11-21T10:37:12.345Z', '2026-11-21T10:35:00.000Z'],
    ['every 15 minutes', '2026-11-21T10:37:12.345Z', '2026-11-21T10:30:00.000Z'],
  ] as const)('%s: the last end at or before %s is %s', (interval, instant, expected) => {
    expect(iso(alignedEndAtOrBefore(interval, at(instant)))).toBe(expected);
  });

  it.each(INTERVALS)(
    '%s: an aligned instant is its own end; a millisecond earlier is the previous end',
    (interval) => {
      const boundary = alignedEndAtOrBefore(interval, at('2026-11-21T10:37:12.345Z'));
      expect(alignedEndAtOrBefore(interval, boundary)).toEqual(boundary);
      const previous = alignedEndAtOrBefore(interval, new Date(boundary.getTime() - 1));
      expect(boundary.getTime() - previous.getTime()).toBe(INTERVAL_SPECS[interval].step * 1000);
    },
  );

  it('puts every week end on a Monday at 00:00 UTC, including across years and leap days', () => {
    for (const instant of [
      '1970-01-01T00:00:00.000Z',
      '1999-12-31T23:59:59.999Z',
      '2024-02-29T12:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
      '2027-12-31T23:00:00.000Z',
    ]) {
      const end = alignedEndAtOrBefore('week', at(instant));
      expect({ instant, day: end.getUTCDay(), time: iso(end).slice(10) }).toEqual({
        instant,
        day: 1,
        time: 'T00:00:00.000Z',
      });
      expect(end.getTime()).toBeLessThanOrEqual(at(instant).getTime());
      expect(at(instant).getTime() - end.getTime()).toBeLessThan(7 * 24 * HOUR);
    }
  });

  it('puts N-minute ends on multiples of N minutes and days at midnight', () => {
    for (let minute = 0; minute < 60; minute++) {
      const instant = at(`2026-11-21T10:${String(minute).padStart(2, '0')}:30.000Z`);
      expect(alignedEndAtOrBefore('every 5 minutes', instant).getUTCMinutes()).toBe(minute - (minute % 5));
      expect(alignedEndAtOrBefore('every 15 minutes', instant).getUTCMinutes()).toBe(minute - (minute % 15));
    }
    expect(iso(alignedEndAtOrBefore('day', at('2026-11-21T23:59:59.999Z')))).toBe('2026-11-21T00:00:00.000Z');
  });

  it.each(INTERVALS)(
    '%s: an interval is [end − length, end), whatever daylight saving time does locally',
    (interval) => {
      const { step } = INTERVAL_SPECS[interval];
      // Europe switched to summer time on 2026-03-29 at 01:00 UTC, the US on 2026-03-08 at 07:00 UTC and back on
      // 2026-11-01: UTC intervals keep their length.
      for (const instant of ['2026-03-29T01:30:00Z', '2026-03-08T07:30:00Z', '2026-11-01T06:30:00Z']) {
        const end = alignedEndAtOrBefore(interval, at(instant));
        const k = Math.round((end.getTime() / 1000 - INTERVAL_SPECS[interval].anchor) / step);
        const interval_ = intervalAt(interval, k);
        expect(interval_.end).toEqual(end);
        expect(interval_.end.getTime() - interval_.start.getTime()).toBe(step * 1000);
        expect(intervalAt(interval, k + 1).start).toEqual(end);
      }
      expect(INTERVAL_SPECS.day.step).toBe(86400);
      expect(INTERVAL_SPECS.week.step).toBe(604800);
    },
  );
});

describe('dueRuns: bounds', () => {
  it('creates every interval ended since creation, up to now', () => {
    const result = dueRuns(state('hour', '2026-11-21T10:30:00Z'), at('2026-11-21T13:20:00Z'), 100);
    expect(result.runs.map((r) => [iso(r.start), iso(r.end)])).toEqual([
      ['2026-11-21T10:00:00.000Z', '2026-11-21T11:00:00.000Z'],
      ['2026-11-21T11:00:00.000Z', '2026-11-21T12:00:00.000Z'],
      ['2026-11-21T12:00:00.000Z', '2026-11-21T13:00:00.000Z'],
    ]);
    expect(iso(result.scheduledThrough!)).toBe('2026-11-21T13:00:00.000Z');
  });

  it('includes both ends of [max(start_at, created_at), min(end_at, now)]', () => {
    const onBoundary = dueRuns(state('hour', '2026-11-21T10:00:00Z'), at('2026-11-21T12:00:00Z'), 100);
    expect(ends(onBoundary)).toEqual([
      '2026-11-21T10:00:00.000Z',
      '2026-11-21T11:00:00.000Z',
      '2026-11-21T12:00:00.000Z',
    ]);
    const justBefore = dueRuns(state('hour', '2026-11-21T10:00:00Z'), at('2026-11-21T11:59:59.999Z'), 100);
    expect(ends(justBefore)).toEqual(['2026-11-21T10:00:00.000Z', '2026-11-21T11:00:00.000Z']);
  });

  it('creates nothing before the first end after creation', () => {
    const result = dueRuns(state('day', '2026-11-21T10:30:00Z'), at('2026-11-21T23:59:59Z'), 100);
    expect(result).toEqual({ runs: [], scheduledThrough: null });
  });

  it('starts at start_at when it is later than created_at, and ignores an earlier one', () => {
    const later = state('hour', '2026-11-21T08:10:00Z', { startAt: at('2026-11-21T10:30:00Z') });
    expect(ends(dueRuns(later, at('2026-11-21T12:00:00Z'), 100))).toEqual([
      '2026-11-21T11:00:00.000Z',
      '2026-11-21T12:00:00.000Z',
    ]);
    const earlier = state('hour', '2026-11-21T10:30:00Z', { startAt: at('2026-11-01T00:00:00Z') });
    expect(ends(dueRuns(earlier, at('2026-11-21T12:00:00Z'), 100))).toEqual([
      '2026-11-21T11:00:00.000Z',
      '2026-11-21T12:00:00.000Z',
    ]);
  });

  it('stops at end_at (an end equal to end_at included) and then considers nothing more', () => {
    const bounded = state('hour', '2026-11-21T10:30:00Z', { endAt: at('2026-11-21T13:00:00Z') });
    const result = dueRuns(bounded, at('2026-11-22T00:00:00Z'), 100);
    expect(ends(result)).toEqual([
      '2026-11-21T11:00:00.000Z',
      '2026-11-21T12:00:00.000Z',
      '2026-11-21T13:00:00.000Z',
    ]);
    expect(iso(result.scheduledThrough!)).toBe('2026-11-21T13:00:00.000Z');
    const after = dueRuns(
      { ...bounded, scheduledThrough: result.scheduledThrough },
      at('2026-11-23T00:00:00Z'),
      100,
    );
    expect(after).toEqual({ runs: [], scheduledThrough: null });
    const unaligned = state('hour', '2026-11-21T10:30:00Z', { endAt: at('2026-11-21T12:59:00Z') });
    expect(ends(dueRuns(unaligned, at('2026-11-22T00:00:00Z'), 100))).toEqual([
      '2026-11-21T11:00:00.000Z',
      '2026-11-21T12:00:00.000Z',
    ]);
  });

  it('continues after the watermark: a tick repeated at the same now creates nothing', () => {
    const first = dueRuns(state('every 5 minutes', '2026-11-21T10:02:00Z'), at('2026-11-21T10:21:00Z'), 100);
    expect(ends(first)).toEqual([
      '2026-11-21T10:05:00.000Z',
      '2026-11-21T10:10:00.000Z',
      '2026-11-21T10:15:00.000Z',
      '2026-11-21T10:20:00.000Z',
    ]);
    const again = state('every 5 minutes', '2026-11-21T10:02:00Z', {
      scheduledThrough: first.scheduledThrough,
    });
    expect(dueRuns(again, at('2026-11-21T10:21:00Z'), 100)).toEqual({ runs: [], scheduledThrough: null });
    expect(ends(dueRuns(again, at('2026-11-21T10:25:00Z'), 100))).toEqual(['2026-11-21T10:25:00.000Z']);
  });

  it('after an interval change continues with the first end of the new length after the watermark', () => {
    const changed = state('day', '2026-11-20T10:30:00Z', { scheduledThrough: at('2026-11-21T13:00:00Z') });
    expect(ends(dueRuns(changed, at('2026-11-23T01:00:00Z'), 100))).toEqual([
      '2026-11-22T00:00:00.000Z',
      '2026-11-23T00:00:00.000Z',
    ]);
  });
});

describe('dueRuns: catch-up after downtime', () => {
  it('creates at most maxCatchup runs per tick, the oldest first, and continues from there', () => {
    let current = state('hour', '2026-11-20T00:00:00Z');
    const now = at('2026-11-21T00:00:00Z');
    const created: string[] = [];
    const perTick: number[] = [];
    for (let tick = 0; tick < 5; tick++) {
      const result = dueRuns(current, now, 10);
      perTick.push(result.runs.length);
      created.push(...ends(result));
      if (result.scheduledThrough) current = { ...current, scheduledThrough: result.scheduledThrough };
    }
    expect(perTick).toEqual([10, 10, 5, 0, 0]);
    expect(created).toHaveLength(25);
    expect(new Set(created).size).toBe(25);
    expect(created[0]).toBe('2026-11-20T00:00:00.000Z');
    expect(created[24]).toBe('2026-11-21T00:00:00.000Z');
    expect([...created].sort()).toEqual(created);
  });

  it('moves the watermark to the last run created when capped, to the last end considered otherwise', () => {
    const capped = dueRuns(state('hour', '2026-11-21T00:00:00Z'), at('2026-11-21T05:00:00Z'), 2);
    expect(iso(capped.scheduledThrough!)).toBe('2026-11-21T01:00:00.000Z');
    const exact = dueRuns(state('hour', '2026-11-21T00:00:00Z'), at('2026-11-21T05:00:00Z'), 6);
    expect(exact.runs).toHaveLength(6);
    expect(iso(exact.scheduledThrough!)).toBe('2026-11-21T05:00:00.000Z');
  });
});

describe('dueRuns: paused intervals', () => {
  const pause = (pausedAt: string, unpausedAt: string | null) => ({
    pausedAt: at(pausedAt),
    unpausedAt: unpausedAt ? at(unpausedAt) : null,
  });

  it('skips every interval that ended in [paused_at, unpaused_at), and only those', () => {
    const paused = state('hour', '2026-11-21T00:30:00Z', {
      pauses: [pause('2026-11-21T03:00:00Z', '2026-11-21T06:00:00Z')],
    });
    const result = dueRuns(paused, at('2026-11-21T08:00:00Z'), 100);
    expect(ends(result)).toEqual([
      '2026-11-21T01:00:00.000Z',
      '2026-11-21T02:00:00.000Z',
      // 03:00, 04:00 and 05:00 ended while paused.
      '2026-11-21T06:00:00.000Z',
      '2026-11-21T07:00:00.000Z',
      '2026-11-21T08:00:00.000Z',
    ]);
    expect(iso(result.scheduledThrough!)).toBe('2026-11-21T08:00:00.000Z');
  });

  it('keeps every pause window: intervals before, between and after several pauses are caught up', () => {
    const paused = state('every 15 minutes', '2026-11-21T00:00:00Z', {
      pauses: [
        pause('2026-11-21T00:20:00Z', '2026-11-21T00:40:00Z'),
        pause('2026-11-21T01:00:00Z', '2026-11-21T01:10:00Z'),
      ],
    });
    expect(ends(dueRuns(paused, at('2026-11-21T01:30:00Z'), 100))).toEqual([
      '2026-11-21T00:00:00.000Z',
      '2026-11-21T00:15:00.000Z',
      '2026-11-21T00:45:00.000Z',
      '2026-11-21T01:15:00.000Z',
      '2026-11-21T01:30:00.000Z',
    ]);
  });

  it('passes over a pause longer than the cap in one tick', () => {
    const paused = state('every 5 minutes', '2026-11-20T00:00:00Z', {
      scheduledThrough: at('2026-11-20T00:00:00Z'),
      pauses: [pause('2026-11-20T00:00:01Z', '2026-11-21T00:00:00Z')],
    });
    const result = dueRuns(paused, at('2026-11-21T00:12:00Z'), 3);
    expect(ends(result)).toEqual([
      '2026-11-21T00:00:00.000Z',
      '2026-11-21T00:05:00.000Z',
      '2026-11-21T00:10:00.000Z',
    ]);
    expect(iso(result.scheduledThrough!)).toBe('2026-11-21T00:10:00.000Z');
  });

  it('moves the watermark over skipped intervals that trail the last run', () => {
    const paused = state('hour', '2026-11-21T00:00:00Z', {
      scheduledThrough: at('2026-11-21T00:00:00Z'),
      pauses: [pause('2026-11-21T02:00:00Z', '2026-11-21T09:00:00Z')],
    });
    const result = dueRuns(paused, at('2026-11-21T05:00:00Z'), 100);
    expect(ends(result)).toEqual(['2026-11-21T01:00:00.000Z']);
    expect(iso(result.scheduledThrough!)).toBe('2026-11-21T05:00:00.000Z');
  });

  it('treats an open window as lasting until unpaused', () => {
    expect(fellWhilePaused(at('2030-01-01T00:00:00Z'), [pause('2026-11-21T00:00:00Z', null)])).toBe(true);
    expect(fellWhilePaused(at('2026-11-20T23:59:59.999Z'), [pause('2026-11-21T00:00:00Z', null)])).toBe(
      false,
    );
  });
});

describe('backfillRange', () => {
  const run = (interval: Interval, start: string, end: string) => {
    const { first, count } = backfillRange(interval, at(start), at(end));
    return Array.from({ length: count }, (_, i) => intervalAt(interval, first + i)).map((r) => [
      iso(r.start),
      iso(r.end),
    ]);
  };

  it('gives one interval per end in (start_at, end_at]', () => {
    expect(run('hour', '2026-11-21T10:00:00Z', '2026-11-21T13:00:00Z')).toEqual([
      ['2026-11-21T10:00:00.000Z', '2026-11-21T11:00:00.000Z'],
      ['2026-11-21T11:00:00.000Z', '2026-11-21T12:00:00.000Z'],
      ['2026-11-21T12:00:00.000Z', '2026-11-21T13:00:00.000Z'],
    ]);
  });

  it('covers an unaligned start with the interval holding it; an unaligned end stops at the last end before it', () => {
    expect(run('day', '2026-11-20T10:30:00Z', '2026-11-22T03:00:00Z')).toEqual([
      ['2026-11-20T00:00:00.000Z', '2026-11-21T00:00:00.000Z'],
      ['2026-11-21T00:00:00.000Z', '2026-11-22T00:00:00.000Z'],
    ]);
  });

  it('counts without listing, and is empty when no end lies in the range', () => {
    expect(
      backfillRange('every 5 minutes', at('2026-11-01T00:00:00Z'), at('2026-11-02T00:00:00Z')).count,
    ).toBe(288);
    expect(backfillRange('week', at('2026-01-05T00:00:00Z'), at('2027-01-04T00:00:00Z')).count).toBe(52);
    expect(backfillRange('hour', at('2026-11-21T10:05:00Z'), at('2026-11-21T10:55:00Z')).count).toBe(0);
    expect(backfillRange('hour', at('2026-11-21T10:05:00Z'), at('2026-11-21T10:05:00Z')).count).toBe(0);
  });

  it('matches the minute grid', () => {
    const intervals = run('every 15 minutes', '2026-11-21T10:07:00Z', '2026-11-21T10:45:00Z');
    expect(intervals.map(([, end]) => end)).toEqual([
      '2026-11-21T10:15:00.000Z',
      '2026-11-21T10:30:00.000Z',
      '2026-11-21T10:45:00.000Z',
    ]);
    expect(MINUTE * 15).toBe(INTERVAL_SPECS['every 15 minutes'].step * 1000);
  });
});
