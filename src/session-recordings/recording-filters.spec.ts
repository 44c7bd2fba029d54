import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { parseFilterDate, parseRecordingFilters } from './recording-filters.js';

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
        },
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
