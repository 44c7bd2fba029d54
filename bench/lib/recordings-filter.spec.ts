import { describe, expect, it } from '@jest/globals';
import { checkPlan, eventsScale, expectedCount, type PlanNode } from './recordings-filter.js';

const scan = (type: string, relation: string, index?: string, plans: PlanNode[] = []): PlanNode => ({
  'Node Type': type,
  'Relation Name': relation,
  ...(index ? { 'Index Name': index } : {}),
  Plans: plans,
});

describe('expectedCount', () => {
  const figures = { listed: 1_000_000, withEvents: 1_000_000, proRecordings: 100_000 };

  it('follows the seed: checkout in every 20th recording, an amount above 150 in every 200th from 151', () => {
    expect(expectedCount('had event', figures)).toBe(50_000);
    expect(expectedCount('had not', figures)).toBe(950_000);
    expect(expectedCount('event property', figures)).toBe(5_000);
    expect(expectedCount('person property', figures)).toBe(100_000);
  });

  it('counts only the recordings with events, the negation over every listed one', () => {
    const small = { listed: 1_000_000, withEvents: 50_000, proRecordings: 7 };
    expect(expectedCount('had event', small)).toBe(2_500);
    expect(expectedCount('had not', small)).toBe(997_500);
    // 151, 351, …, 49951: 250 recordings.
    expect(expectedCount('event property', small)).toBe(250);
    expect(expectedCount('event property', { ...small, withEvents: 150 })).toBe(0);
    expect(expectedCount('event property', { ...small, withEvents: 151 })).toBe(1);
    expect(() => expectedCount('other', small)).toThrow("no expected count for 'other'");
  });

  it('counts within the window: the newest recordings only', () => {
    const window = { listed: 129_600, withEvents: 1_000_000, proRecordings: 12_960 };
    expect(expectedCount('had event', window)).toBe(6_480);
    expect(expectedCount('had not', window)).toBe(123_120);
    expect(expectedCount('event property', window)).toBe(648);
  });
});

describe('checkPlan', () => {
  it('accepts the events read by their name index, the recordings probed by session, and names the indexes', () => {
    const plan = scan('Hash Join', 'session_recordings', undefined, [
      scan('Index Scan', 'events_p20261010', 'events_p20261010_team_id_event_timestamp_idx'),
      scan('Index Only Scan', 'session_recordings', 'session_recordings_team_session_live_idx'),
      scan('Index Scan', 'session_recordings', 'session_recordings_team_start_idx'),
    ]);
    expect(checkPlan(plan, 'events-by-name')).toEqual({
      problems: [],
      indexes: [
        'events_p*_team_id_event_timestamp_idx',
        'session_recordings_team_session_live_idx',
        'session_recordings_team_start_idx',
      ],
    });
  });

  it('reports sequential scans and events read by another index', () => {
    const plan = scan('Nested Loop', 'x', undefined, [
      scan('Seq Scan', 'events_p20261010'),
      scan('Seq Scan', 'session_recordings'),
      scan('Index Scan', 'events_p20261011', 'events_p20261011_team_id_session_id_timestamp_idx'),
    ]);
    expect(checkPlan(plan, 'events-by-name').problems).toEqual([
      'sequential scan of events_p20261010',
      'sequential scan of session_recordings',
      'the events are not read by their (team_id, event, timestamp) index',
      'the recordings of the sessions are not probed by their (team_id, session_id) index',
    ]);
  });

  it('refuses any read of the events when no event filter is given', () => {
    const plan = scan('Index Scan', 'events_p20261010', 'events_p20261010_team_id_event_timestamp_idx');
    expect(checkPlan(plan, 'no-events').problems).toEqual([
      'the events are read although no event filter is given',
    ]);
    const empty = scan('Append', 'events', undefined, [
      scan('Index Scan', 'events_p20261010', 'events_p20261010_team_id_event_timestamp_idx'),
      scan('Seq Scan', 'events_p20261127'),
      scan('Index Only Scan', 'session_recordings', 'session_recordings_team_session_live_idx'),
    ]);
    expect(checkPlan(empty, 'events-by-name', new Set(['events_p20261127'])).problems).toEqual([]);
    expect(checkPlan(empty, 'events-by-name').problems).toEqual(['sequential scan of events_p20261127']);
  });
});

describe('eventsScale', () => {
  it('defaults to every recording and checks BENCH_FILTER_RECORDINGS', () => {
    expect(eventsScale({}, 1_000_000)).toBe(1_000_000);
    expect(eventsScale({ BENCH_FILTER_RECORDINGS: '50000' }, 1_000_000)).toBe(50_000);
    expect(() => eventsScale({ BENCH_FILTER_RECORDINGS: '0' }, 10)).toThrow('from 1 to 10');
    expect(() => eventsScale({ BENCH_FILTER_RECORDINGS: '11' }, 10)).toThrow('from 1 to 10');
  });
});
