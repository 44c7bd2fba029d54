import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../../common/errors/api-error.js';
import { parseFilterDate, parseRecordingFilters } from './recording-filters.js';
import type { RecordingListQueryDto } from './dto/recording-list-query.dto.js';

const NOW = new Date('2026-03-31T12:00:00.000Z');

function error(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('parseFilterDate', () => {
  it.each([
    ['-1h', '2026-03-31T11:00:00.000Z'],
    ['-7d', '2026-03-24T12:00:00.000Z'],
    ['-2w', '2026-03-17T12:00:00.000Z'],
    ['-1m', '2026-03-03T12:00:00.000Z'], // February has no 31st: JavaScript rolls over
    ['-1y', '2025-03-31T12:00:00.000Z'],
    ['2026-01-02T03:04:05+01:00', '2026-01-02T02:04:05.000Z'],
  ])('reads %s', (value, expected) => {
    expect(parseFilterDate(value, NOW)?.toISOString()).toBe(expected);
  });
  it.each(['2026-01-02', '7d', '-7x', '-d', 'yesterday', '2026-01-02T03:04:05'])('rejects %s', (value) => {
    expect(parseFilterDate(value, NOW)).toBeNull();
  });
});

describe('parseRecordingFilters', () => {
  it('reads every filter and ignores other parameters', () => {
    expect(
      parseRecordingFilters(
        {
          date_from: '2026-01-01T00:00:00Z',
          date_to: '-1d',
          distinct_id: 'ada',
          person_uuid: '0192D6C4-8F8A-7C1E-9D57-2A9D3C1E4B5F',
          limit: '5',
          utm: 'x',
        } as RecordingListQueryDto,
        NOW,
      ),
    ).toEqual({
      dateFrom: new Date('2026-01-01T00:00:00Z'),
      dateTo: new Date('2026-03-30T12:00:00Z'),
      distinctId: 'ada',
      personUuid: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
    });
    expect(parseRecordingFilters({ date_from: '', distinct_id: '' }, NOW)).toEqual({});
  });

  it.each([
    [{ date_from: 'yesterday' }, 'date_from'],
    [{ date_to: '2026-01-01' }, 'date_to'],
    [{ date_from: ['-1d', '-2d'] }, 'date_from'],
    [{ date_from: '-1d', date_to: '-2d' }, 'date_to'],
    [{ distinct_id: 'x'.repeat(201) }, 'distinct_id'],
    [{ distinct_id: ['a', 'b'] }, 'distinct_id'],
    [{ person_uuid: 'not-a-uuid' }, 'person_uuid'],
  ])('rejects %j with attr %s', (query, attr) => {
    const e = error(() => parseRecordingFilters(query, NOW));
    expect(e.getStatus()).toBe(400);
    expect(e.attr).toBe(attr);
  });
});

describe('parseRecordingFilters: PostHog query filters', () => {
  const json = (value: unknown) => JSON.stringify(value);

  it('reads having_predicates as PostHog sends them (value as number or numeric text)', () => {
    expect(
      parseRecordingFilters(
        {
          having_predicates: json([
            { type: 'recording', key: 'duration', operator: 'gt', value: 60 },
            { key: 'console_error_count', operator: 'gte', value: '2' },
            { key: 'active_seconds', value: 5 },
          ]),
        },
        NOW,
      ),
    ).toEqual({
      predicates: [
        { key: 'duration', operator: 'gt', value: 60 },
        { key: 'console_error_count', operator: 'gte', value: 2 },
        { key: 'active_seconds', operator: 'exact', value: 5 },
      ],
    });
  });

  it('reads console_log_filters levels (log is info), and an AND operand', () => {
    expect(
      parseRecordingFilters(
        {
          console_log_filters: json([
            { type: 'log_entry', key: 'level', operator: 'exact', value: ['error', 'warn'] },
            { key: 'level', value: ['log', 'info'] },
          ]),
          operand: 'AND',
        },
        NOW,
      ),
    ).toEqual({ consoleLevels: [['error', 'warn'], ['info']] });
    expect(parseRecordingFilters({ having_predicates: '[]', console_log_filters: '[]' }, NOW)).toEqual({});
  });

  it.each([
    [{ having_predicates: 'duration>60' }, 'having_predicates', /JSON array/],
    [{ having_predicates: json({ key: 'duration' }) }, 'having_predicates', /JSON array/],
    [{ having_predicates: json(['duration']) }, 'having_predicates', /must be an object/],
    [
      { having_predicates: json([{ key: 'start_url', operator: 'exact', value: 1 }]) },
      'having_predicates',
      /not supported/,
    ],
    [
      { having_predicates: json([{ key: 'duration', operator: 'icontains', value: 1 }]) },
      'having_predicates',
      /operator/,
    ],
    [
      { having_predicates: json([{ key: 'duration', operator: 'gt', value: 'long' }]) },
      'having_predicates',
      /numbers/,
    ],
    [
      { having_predicates: json([{ type: 'event', key: 'duration', value: 1 }]) },
      'having_predicates',
      /type 'recording'/,
    ],
    [
      { having_predicates: json(Array(21).fill({ key: 'duration', value: 1 })) },
      'having_predicates',
      /at most 20/,
    ],
    [
      { console_log_filters: json([{ key: 'message', operator: 'icontains', value: 'boom' }]) },
      'console_log_filters',
      /message text is not supported/,
    ],
    [
      { console_log_filters: json([{ key: 'level', value: ['fatal'] }]) },
      'console_log_filters',
      /levels must be/,
    ],
    [{ console_log_filters: json([{ key: 'level', value: [] }]) }, 'console_log_filters', /levels must be/],
    [
      { console_log_filters: json([{ key: 'level', operator: 'icontains', value: ['error'] }]) },
      'console_log_filters',
      /operator/,
    ],
    [{ operand: 'OR' }, 'operand', /Only 'AND'/],
  ])('rejects %j naming %s', (query, attr, detail) => {
    const e = error(() => parseRecordingFilters(query, NOW));
    expect(e.getStatus()).toBe(400);
    expect(e.attr).toBe(attr);
    expect(e.detail).toMatch(detail);
  });
});
