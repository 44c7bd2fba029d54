import { describe, expect, it } from '@jest/globals';
import {
  type PurgeCheck,
  purgeClock,
  purgeProblems,
  retentionCutoff,
  summarizeLatencies,
} from './recordings-purge.js';

describe('retentionCutoff', () => {
  it('is the start of the UTC day minus days - 1', () => {
    expect(retentionCutoff(Date.parse('2026-11-06T13:45:00Z'), 30).toISOString()).toBe(
      '2026-10-08T00:00:00.000Z',
    );
    expect(retentionCutoff(Date.parse('2026-11-06T00:00:00Z'), 1).toISOString()).toBe(
      '2026-11-06T00:00:00.000Z',
    );
  });
});

describe('purgeClock', () => {
  const now = new Date('2026-11-24T00:23:42Z');

  it('is now when no other recording would expire by then', () => {
    expect(purgeClock(null, now)).toEqual(now);
    expect(purgeClock(new Date('2026-12-30T10:00:00Z'), now)).toEqual(now);
  });

  it('goes back to the start of the day of the earliest expiry elsewhere', () => {
    // The seeded recordings: the oldest started 2026-10-08T04:26:40Z, kept 30 days.
    const earliest = new Date(Date.parse('2026-10-08T04:26:40Z') + 29 * 86_400_000);
    const clock = purgeClock(earliest, now);
    expect(clock.toISOString()).toBe('2026-11-06T00:00:00.000Z');
    // At that clock the oldest seeded recording is exactly not expired (start >= cutoff).
    expect(retentionCutoff(clock.getTime(), 30).getTime()).toBeLessThanOrEqual(
      Date.parse('2026-10-08T04:26:40Z'),
    );
    // A day later it would be.
    expect(retentionCutoff(clock.getTime() + 86_400_000, 30).getTime()).toBeGreaterThan(
      Date.parse('2026-10-08T04:26:40Z'),
    );
  });
});

describe('summarizeLatencies', () => {
  it('gives the median, 99th percentile and maximum', () => {
    const values = Array.from({ length: 200 }, (_, i) => 200 - i);
    expect(summarizeLatencies(values, 3)).toEqual({ requests: 200, errors: 3, p50: 100, p99: 198, max: 200 });
    expect(summarizeLatencies([], 0)).toEqual({ requests: 0, errors: 0, p50: 0, p99: 0, max: 0 });
  });
});

describe('purgeProblems', () => {
  const rows = (n: number) => ({
    recordings: n,
    snapshotChunks: 3 * n,
    eventKeys: 5 * n,
    views: n / 10,
    sharing: n / 50,
  });
  const good: PurgeCheck = {
    expiredBefore: rows(1000),
    expiredAfter: rows(0),
    liveBefore: rows(100),
    liveAfter: rows(100),
    probeSessionsAnswered: 12,
    probeRecordingsAfter: 12,
    counter: 1107,
    notDeleted: 1107,
    othersBefore: 1_000_000,
    othersAfter: 1_000_000,
    purgedRecordings: 1000,
    purgedChunks: 3000,
  };

  it('finds nothing when exactly the expired rows went', () => {
    expect(purgeProblems(good)).toEqual([]);
  });

  it('names every table with rows left or lost, and the counter, the report and other projects', () => {
    expect(
      purgeProblems({
        ...good,
        expiredAfter: { ...rows(0), eventKeys: 4 },
        liveAfter: { ...rows(100), sharing: 1 },
        probeRecordingsAfter: 11,
        counter: 1200,
        othersAfter: 999_990,
        purgedRecordings: 999,
        purgedChunks: 2999,
      }),
    ).toEqual([
      '4 expired session_recording_event_keys rows left',
      'session_recording_sharing: 1 live rows after, 2 before',
      'the purge reported 999 recordings, 1000 expired',
      'the purge reported 2999 snapshot chunks, 3000 expired',
      '11 recordings of capture probes, 12 sessions answered',
      "the project's recording counter says 1200, it has 1107 recordings",
      'other projects: 999990 recordings after, 1000000 before',
    ]);
    expect(purgeProblems({ ...good, counter: null })).toEqual([
      "the project's recording counter says null, it has 1107 recordings",
    ]);
  });
});
