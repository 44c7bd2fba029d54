import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { CreateRoleDto } from './dto/role-input.dto.js';
import { toRoleDto } from './dto/role.dto.js';

const violations = async (body: unknown) =>
  (await validate(plainToInstance(CreateRoleDto, body))).map((e) => [
    e.property,
    Object.values(e.constraints ?? {}),
  ]);

describe('roles', () => {
  it('answers a role field by field, the date in ISO 8601', () => {
    const createdAt = new Date('2026-11-21T10:00:00.000Z');
    expect(toRoleDto({ id: 'a1', organizationId: 'o1', name: 'Launch', createdAt })).toEqual({
      id: 'a1',
      name: 'Launch',
      created_at: '2026-11-21T10:00:00.000Z',
    });
  });

  it('takes a trimmed name of 1 to 200 characters', async () => {
    expect(await violations({ name: 'Launch' })).toEqual([]);
    expect(plainToInstance(CreateRoleDto, { name: '  Launch \n' }).name).toBe('Launch');
    expect(await violations({ name: 'x'.repeat(200) })).toEqual([]);
  });

  it('refuses a missing, blank, too long or non-string name, with the message the API answers', async () => {
    expect(await violations({ name: '   ' })).toEqual([['name', ['This field may not be blank.']]]);
    expect(await violations({ name: 'x'.repeat(201) })).toEqual([
      ['name', ['Ensure this field has no more than 200 characters.']],
    ]);
    expect((await violations({ name: 7 }))[0]).toEqual([
      'name',
      expect.arrayContaining(['Must be a string.']),
    ]);
    expect((await violations({}))[0]?.[0]).toBe('name');
  });
});
