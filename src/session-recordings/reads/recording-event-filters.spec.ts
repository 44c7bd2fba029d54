import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../common/errors/api-error.js';
import { POSTGRES_SESSION_EVENTS } from '../../events/events-session-filters.js';
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
  const binder = () => {
    const params: unknown[] = [];
    const bind = (v: unknown) => {
      params.push(v);
      return `$${params.length + 5}`;
    };
    return { params, bind };
  };

  it('reads a named event as a set from the events side, probed by its ids; an excluded one in three forms', () => {
    const { params, bind } = binder();
    const sql = recordingEventFilterSql(
      POSTGRES_SESSION_EVENTS,
      {
        events: [{ event: 'a', properties: [{ key: 'k', operator: 'exact', values: ['x'] }] }],
        excludeEvents: [{ event: 'b', properties: [] }],
      },
      bind,
      '$5',
    );
    expect(params).toEqual(['a', 'k', ['x'], 'b']);
    expect(sql.sets.map((s) => [s.name, s.negated])).toEqual([
      ['f1', false],
      ['f2', true],
    ]);
    expect(sql.sets[0].sql).toBe(
      'SELECT DISTINCT e.session_id COLLATE "C" AS session_id FROM events e WHERE e.team_id = $1 AND e.event = $6::text ' +
        "AND e.session_id IS NOT NULL AND e.timestamp >= $5::timestamptz - interval '5 minutes' " +
        'AND (e.properties ->> $7::text) = ANY($8::text[])',
    );
    expect(sql.sets[1].sql).toContain('e.event = $9::text');
    expect(sql.page).toEqual(['r.session_id = ANY(ARRAY(SELECT f1.session_id FROM f1))']);
    expect(sql.count).toEqual(sql.page);
    expect(sql.probes).toBe(false);
    expect(sql.excluded?.had).toBe('r.session_id = ANY(ARRAY(SELECT f2.session_id FROM f2))');
    expect(sql.excluded?.antiJoin).toEqual([
      'NOT EXISTS (SELECT 1 FROM f2 WHERE f2.session_id = r.session_id)',
    ]);
    // The probe holds the set's own conditions (the same placeholders), for the recording's session.
    expect(sql.excluded?.probes).toEqual([
      "(SELECT 1 FROM events e WHERE e.team_id = $1 AND e.event = $9::text AND e.session_id IS NOT NULL AND e.timestamp >= $5::timestamptz - interval '5 minutes' " +
        'AND e.session_id = r.session_id COLLATE "default" LIMIT 1) IS NULL',
    ]);
  });

  it('counts the recordings that had any of several excluded events from the union of their sets', () => {
    const { bind } = binder();
    const sql = recordingEventFilterSql(
      POSTGRES_SESSION_EVENTS,
      {
        excludeEvents: [
          { event: 'a', properties: [] },
          { event: 'b', properties: [] },
        ],
      },
      bind,
      null,
    );
    expect(sql.count).toEqual([]);
    expect(sql.page).toEqual([]);
    expect(sql.excluded?.had).toBe(
      'r.session_id = ANY(ARRAY(SELECT f1.session_id FROM f1 UNION SELECT f2.session_id FROM f2))',
    );
    expect(sql.excluded?.probes).toHaveLength(2);
    expect(sql.sets[0].sql).not.toContain('timestamp');
  });

  it('keeps a hashed lookup of an event set in a walk with probes', () => {
    const { bind } = binder();
    const sql = recordingEventFilterSql(
      POSTGRES_SESSION_EVENTS,
      {
        events: [
          { event: 'a', properties: [] },
          { event: null, properties: [] },
        ],
      },
      bind,
      '$5',
    );
    expect(sql.probes).toBe(true);
    expect(sql.page[0]).toBe('r.session_id IN (SELECT f1.session_id FROM f1)');
    expect(sql.count[0]).toBe('r.session_id = ANY(ARRAY(SELECT f1.session_id FROM f1))');
  });

  it('keeps a probe per recording for any event, and the person filter as EXISTS', () => {
    const { params, bind } = binder();
    const sql = recordingEventFilterSql(
      POSTGRES_SESSION_EVENTS,
      {
        excludeEvents: [{ event: null, properties: [{ key: 'k', operator: 'is_not', values: ['x'] }] }],
        personProperties: [{ key: 'plan', operator: 'exact', values: ['pro'] }],
      },
      bind,
      '$5',
    );
    expect(params).toEqual(['k', ['x'], 'plan', ['pro']]);
    expect(sql.sets).toEqual([]);
    expect(sql.probes).toBe(true);
    expect(sql.count[0]).toMatch(/^NOT EXISTS \(SELECT 1 FROM events e WHERE .*\$6::text.*\$7::text\[\]/);
    expect(sql.page[0]).toMatch(/\$6::text.*\$7::text\[\].* LIMIT 1\) IS NULL$/);
    for (const s of [sql.count[0], sql.page[0]]) {
      expect(s).toContain('e.session_id = r.session_id COLLATE "default"');
      expect(s).toContain("e.timestamp >= $5::timestamptz - interval '5 minutes'");
    }
    expect(sql.count[1]).toBe(sql.page[1]);
    expect(sql.count[1]).toMatch(
      /^EXISTS \(SELECT 1 FROM persons pp WHERE pp\.id = r\.person_id AND pp\.team_id = \$1 AND /,
    );
  });
});
