import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../common/errors/api-error.js';
import { parseRecordingEventFilters, recordingEventFilterSql } from './recording-event-filters.js';

describe('parseRecordingEventFilters', () => {
  it("reads PostHog's entity filters with their defaults", () => {
    const filters = parseRecordingEventFilters({
      events: JSON.stringify([
        {
          id: '$pageview',
          type: 'events',
          properties: [{ key: '$current_url', value: 'checkout', operator: 'icontains', type: 'event' }],
        },
        { id: null },
      ]),
      exclude_events: JSON.stringify([{ id: 'order placed', properties: [{ key: 'total', value: 3 }] }]),
      properties: JSON.stringify([{ key: 'email', operator: 'is_set', type: 'person' }]),
      session_ids: '["a","b"]',
    });
    expect(filters).toEqual({
      events: [
        {
          event: '$pageview',
          properties: [{ key: '$current_url', operator: 'icontains', values: ['checkout'] }],
        },
        { event: null, properties: [] },
      ],
      excludeEvents: [
        { event: 'order placed', properties: [{ key: 'total', operator: 'exact', values: ['3'] }] },
      ],
      personProperties: [{ key: 'email', operator: 'is_set', values: [] }],
      sessionIds: ['a', 'b'],
    });
  });

  it('leaves out empty parameters', () => {
    expect(parseRecordingEventFilters({ events: '', properties: '[]' })).toEqual({});
  });

  it('names the parameter of a bad value', () => {
    const attrOf = (query: Record<string, unknown>) => {
      try {
        parseRecordingEventFilters(query);
      } catch (e) {
        expect(e).toBeInstanceOf(ApiError);
        return (e as ApiError).body;
      }
      throw new Error('expected an ApiError');
    };
    expect(attrOf({ exclude_events: '[1]' })).toMatchObject({ attr: 'exclude_events' });
    expect(attrOf({ events: ['[]', '[]'] })).toMatchObject({ attr: 'events' });
    expect(attrOf({ properties: '[{"key": "a", "operator": "gt", "value": "x"}]' })).toMatchObject({
      attr: 'properties',
    });
  });
});

describe('recordingEventFilterSql', () => {
  it('gives the page a probe per recording and the count EXISTS, with the same placeholders', () => {
    const params: unknown[] = [];
    const bind = (v: unknown) => {
      params.push(v);
      return `$${params.length + 5}`;
    };
    const sql = recordingEventFilterSql(
      {
        events: [{ event: 'a', properties: [] }],
        excludeEvents: [{ event: null, properties: [{ key: 'k', operator: 'is_not', values: ['x'] }] }],
      },
      bind,
      '$5',
    );
    expect(params).toEqual(['a', 'k', ['x']]);
    expect(sql.count[0]).toMatch(/^EXISTS \(SELECT 1 FROM events e WHERE .* AND e\.event = \$6::text\)$/);
    expect(sql.count[1]).toMatch(/^NOT EXISTS \(/);
    expect(sql.page[0]).toMatch(/ AND e\.event = \$6::text LIMIT 1\) IS NOT NULL$/);
    expect(sql.page[1]).toMatch(/\$7::text.*\$8::text\[\].* LIMIT 1\) IS NULL$/);
    for (const s of [...sql.count, ...sql.page]) {
      expect(s).toContain('e.session_id = r.session_id COLLATE "default"');
      expect(s).toContain("e.timestamp >= $5::timestamptz - interval '5 minutes'");
    }
  });
});
