import { describe, expect, it } from '@jest/globals';
import { identifiedFirst, toEventPersonDto, toPersonDetailDto } from './person-detail.dto.js';

describe('identifiedFirst', () => {
  it("puts PostHog's anonymous ids (five dash-separated groups) after the others, each group in its order", () => {
    const anon1 = '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f';
    const anon2 = '18f0a1b2c3d-0a1b2c3d4e5f6-4c0d1e2f-1fa400-18f0a1b2c3d';
    expect(identifiedFirst([anon1, 'ada@example.com', anon2, 'user-1'])).toEqual([
      'ada@example.com',
      'user-1',
      anon1,
      anon2,
    ]);
    // Upper case, or four groups, is not PostHog's anonymous shape.
    expect(identifiedFirst(['a-b-c-d-e', 'A-B-C-D-E', 'a-b-c-d'])).toEqual([
      'A-B-C-D-E',
      'a-b-c-d',
      'a-b-c-d-e',
    ]);
  });
});

describe('toPersonDetailDto', () => {
  it('answers the uuid as id and names the person by email, else name, else an identified id', () => {
    const base = {
      id: 7,
      uuid: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
      createdAt: new Date('2026-11-21T10:00:00.000Z'),
      isIdentified: true,
      distinctIds: ['0192d6c4-0000-7c1e-9d57-2a9d3c1e4b5f', 'ada'],
      distinctIdCount: 2,
    };
    const dto = toPersonDetailDto({ ...base, properties: {} });
    expect(dto).toEqual({
      id: base.uuid,
      uuid: base.uuid,
      name: 'ada',
      distinct_ids: ['ada', '0192d6c4-0000-7c1e-9d57-2a9d3c1e4b5f'],
      distinct_ids_count: 2,
      properties: {},
      created_at: '2026-11-21T10:00:00.000Z',
      is_identified: true,
    });
    expect(toPersonDetailDto({ ...base, properties: { name: 'Ada', email: 'a@b.c' } }).name).toBe('a@b.c');
    expect(toPersonDetailDto({ ...base, properties: { name: 'Ada' } }).name).toBe('Ada');
  });
});

describe('toEventPersonDto', () => {
  it('is null without a person, else one distinct id and the properties read', () => {
    expect(toEventPersonDto(undefined)).toBeNull();
    expect(
      toEventPersonDto({ isIdentified: false, firstDistinctId: 'u', properties: { email: 'e' } }),
    ).toEqual({
      is_identified: false,
      distinct_ids: ['u'],
      properties: { email: 'e' },
    });
  });
});
