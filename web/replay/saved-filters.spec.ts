import { describe, expect, it } from '@jest/globals';
import { DEFAULT_FILTERS, type FilterValues } from './filters.js';
import {
  filtersFromSaved,
  filtersFromUrlQuery,
  filtersToUrlQuery,
  grantsViews,
  savedFilters,
  viewName,
} from './saved-filters.js';

describe('savedFilters', () => {
  it('keeps the list query parameters, the JSON ones as values, without the page', () => {
    const values: FilterValues = {
      ...DEFAULT_FILTERS,
      dateRange: '-30d',
      durationOperator: 'gt',
      durationValue: 2,
      durationUnit: 'minutes',
      person: 'visitor-7',
      consoleErrors: true,
    };
    expect(savedFilters(values)).toEqual({
      date_from: '-30d',
      having_predicates: [{ type: 'recording', key: 'duration', operator: 'gt', value: 120 }],
      console_log_filters: [{ type: 'log_entry', key: 'level', operator: 'exact', value: ['error'] }],
      distinct_id: 'visitor-7',
    });
    expect(savedFilters({ ...DEFAULT_FILTERS, dateRange: 'all' })).toEqual({});
  });

  it('round-trips through filtersFromSaved', () => {
    const cases: FilterValues[] = [
      DEFAULT_FILTERS,
      { ...DEFAULT_FILTERS, dateRange: 'all' },
      { ...DEFAULT_FILTERS, durationOperator: 'lt', durationValue: 45, durationUnit: 'seconds' },
      { ...DEFAULT_FILTERS, dateRange: '-24h', consoleErrors: true },
      { ...DEFAULT_FILTERS, person: '01890000-0000-7000-8000-000000000001' },
      { ...DEFAULT_FILTERS, event: 'checkout started', notEvent: '$exception' },
      { ...DEFAULT_FILTERS, event: '$pageview', eventPropertyKey: '$pathname', eventPropertyValue: '/cart' },
      {
        ...DEFAULT_FILTERS,
        dateRange: 'custom',
        customFrom: '2026-11-20T09:30',
        customTo: '2026-11-21T18:05',
      },
    ];
    for (const values of cases) {
      expect(filtersFromSaved(savedFilters(values))).toEqual({ values, ignored: [] });
    }
  });
});

describe('filtersFromSaved', () => {
  it('names what the browser cannot show, and applies the rest', () => {
    const { values, ignored } = filtersFromSaved({
      date_from: '-7d',
      events: [{ id: null, type: 'events' }],
      having_predicates: [{ key: 'click_count', operator: 'gt', value: 3 }],
      console_log_filters: [{ type: 'log_entry', key: 'level', operator: 'exact', value: ['warn', 'error'] }],
      person_uuid: 'p-1',
    });
    expect(values).toEqual({ ...DEFAULT_FILTERS, dateRange: '-7d', person: 'p-1' });
    expect(ignored).toEqual(['events', 'having_predicates', 'console_log_filters']);
  });

  it('reads an empty view as all time, and refuses nonsense values', () => {
    expect(filtersFromSaved({}).values).toEqual({ ...DEFAULT_FILTERS, dateRange: 'all' });
    expect(filtersFromSaved({ date_from: 'yesterday', distinct_id: 5 }).ignored).toEqual([
      'date_from',
      'distinct_id',
    ]);
  });
});

describe('viewName', () => {
  it('falls back to the derived name, then the short id', () => {
    const base = { id: 1, short_id: 'Ab12Cd34', filters: {} };
    expect(viewName({ ...base, name: 'Checkout', derived_name: 'x' })).toBe('Checkout');
    expect(viewName({ ...base, name: '', derived_name: 'Derived' })).toBe('Derived');
    expect(viewName({ ...base, name: null, derived_name: null })).toBe('Untitled (Ab12Cd34)');
  });
});

describe('grantsViews', () => {
  it('needs the views read scope, its write scope, or every scope', () => {
    expect(grantsViews(['*'])).toBe(true);
    expect(grantsViews(['session_recording_playlist:read'])).toBe(true);
    expect(grantsViews(['project:read', 'session_recording_playlist:write'])).toBe(true);
    expect(grantsViews(['project:read', 'session_recording:write'])).toBe(false);
    expect(grantsViews([])).toBe(false);
  });
});

describe('saved event filters', () => {
  it('keeps events and exclude_events as JSON values', () => {
    expect(savedFilters({ ...DEFAULT_FILTERS, dateRange: 'all', event: 'a', notEvent: 'b' })).toEqual({
      events: [{ id: 'a', type: 'events', properties: [] }],
      exclude_events: [{ id: 'b', type: 'events' }],
    });
  });

  it('names what the filter bar cannot show: several events, other operators, negations with properties', () => {
    const { values, ignored } = filtersFromSaved({
      events: [
        { id: 'a', type: 'events' },
        { id: 'b', type: 'events' },
      ],
      exclude_events: [{ id: 'c', type: 'events', properties: [{ key: 'k', value: 'v' }] }],
    });
    expect(ignored).toEqual(['events', 'exclude_events']);
    expect(values.event).toBe('');
    expect(values.notEvent).toBe('');
    expect(
      filtersFromSaved({
        events: [{ id: 'a', properties: [{ key: 'k', value: 'v', operator: 'icontains' }] }],
      }).ignored,
    ).toEqual(['events']);
  });
});

describe('filters in the address', () => {
  it('round-trips every filter, "All time" included', () => {
    const cases: FilterValues[] = [
      { ...DEFAULT_FILTERS, dateRange: 'all' },
      { ...DEFAULT_FILTERS, event: 'checkout started', eventPropertyKey: 'plan', eventPropertyValue: 'pro' },
      { ...DEFAULT_FILTERS, dateRange: '-30d', notEvent: 'checkout started', consoleErrors: true },
    ];
    for (const values of cases) {
      const query = new URLSearchParams(filtersToUrlQuery(values).toString());
      expect(filtersFromUrlQuery(query)).toEqual({ values, ignored: [] });
    }
    expect(filtersToUrlQuery({ ...DEFAULT_FILTERS, dateRange: 'all' }).toString()).toBe('date_from=all');
  });

  it('reads no query as the defaults, and names what it cannot read', () => {
    expect(filtersFromUrlQuery(new URLSearchParams())).toEqual({ values: DEFAULT_FILTERS, ignored: [] });
    const { values, ignored } = filtersFromUrlQuery(
      new URLSearchParams('events=%5Bnot+json&date_from=-24h&x=1'),
    );
    expect(values.dateRange).toBe('-24h');
    expect(ignored).toEqual(['events', 'x']);
  });
});
