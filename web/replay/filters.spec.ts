import { describe, expect, it } from '@jest/globals';
import { DEFAULT_FILTERS, filterQuery, localToIso } from './filters.js';

const params = (q: URLSearchParams) => Object.fromEntries(q.entries());

describe('filterQuery', () => {
  it('sends the page and the default date range only', () => {
    expect(params(filterQuery(DEFAULT_FILTERS, 20, 40))).toEqual({
      limit: '20',
      offset: '40',
      date_from: '-7d',
    });
    expect(params(filterQuery({ ...DEFAULT_FILTERS, dateRange: 'all' }, 20, 0))).toEqual({
      limit: '20',
      offset: '0',
    });
  });

  it('turns a custom range of local times into zoned timestamps', () => {
    const q = filterQuery(
      { ...DEFAULT_FILTERS, dateRange: 'custom', customFrom: '2026-11-20T08:30', customTo: '' },
      20,
      0,
    );
    expect(q.get('date_from')).toBe(new Date(2026, 10, 20, 8, 30).toISOString());
    expect(q.has('date_to')).toBe(false);
  });

  it('sends the duration as a PostHog recording predicate in seconds', () => {
    const q = filterQuery(
      { ...DEFAULT_FILTERS, durationOperator: 'gt', durationValue: 2, durationUnit: 'minutes' },
      20,
      0,
    );
    expect(JSON.parse(q.get('having_predicates') ?? '')).toEqual([
      { type: 'recording', key: 'duration', operator: 'gt', value: 120 },
    ]);
    const lt = filterQuery(
      { ...DEFAULT_FILTERS, durationOperator: 'lt', durationValue: 30, durationUnit: 'seconds' },
      20,
      0,
    );
    expect(JSON.parse(lt.get('having_predicates') ?? '')[0]).toMatchObject({ operator: 'lt', value: 30 });
  });

  it('asks for console errors as a PostHog log level filter', () => {
    const q = filterQuery({ ...DEFAULT_FILTERS, consoleErrors: true }, 20, 0);
    expect(JSON.parse(q.get('console_log_filters') ?? '')).toEqual([
      { type: 'log_entry', key: 'level', operator: 'exact', value: ['error'] },
    ]);
  });

  it('sends a UUID as person_uuid and anything else as distinct_id', () => {
    const uuid = '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f';
    expect(filterQuery({ ...DEFAULT_FILTERS, person: ` ${uuid} ` }, 20, 0).get('person_uuid')).toBe(uuid);
    const byId = filterQuery({ ...DEFAULT_FILTERS, person: 'user-42' }, 20, 0);
    expect([byId.get('distinct_id'), byId.has('person_uuid')]).toEqual(['user-42', false]);
  });
});

describe('localToIso', () => {
  it('is null for empty or invalid values', () => {
    expect(localToIso('')).toBeNull();
    expect(localToIso('yesterday')).toBeNull();
  });
});

describe('filterQuery: events', () => {
  it('sends "had event" as PostHog\'s events entity filter, with its property, and "did not have" as exclude_events', () => {
    const q = filterQuery(
      {
        ...DEFAULT_FILTERS,
        event: ' checkout started ',
        eventPropertyKey: 'plan',
        eventPropertyValue: 'pro',
        notEvent: '$exception',
      },
      20,
      0,
    );
    expect(JSON.parse(q.get('events')!)).toEqual([
      {
        id: 'checkout started',
        type: 'events',
        properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }],
      },
    ]);
    expect(JSON.parse(q.get('exclude_events')!)).toEqual([{ id: '$exception', type: 'events' }]);
  });

  it('sends no property without a key, and nothing without a name', () => {
    const q = filterQuery({ ...DEFAULT_FILTERS, event: '$pageview', eventPropertyValue: 'x' }, 20, 0);
    expect(JSON.parse(q.get('events')!)).toEqual([{ id: '$pageview', type: 'events', properties: [] }]);
    const none = filterQuery({ ...DEFAULT_FILTERS, eventPropertyKey: 'plan', notEvent: '  ' }, 20, 0);
    expect(none.has('events')).toBe(false);
    expect(none.has('exclude_events')).toBe(false);
  });
});
