import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import type { OrganizationMembershipEntity } from '../memberships/organization-membership.entity.js';
import type { UserEntity } from '../users/user.entity.js';
import { CreateRoleDto, CreateRoleMembershipDto, UpdateRoleDto } from './dto/role-input.dto.js';
import { toRoleDto } from './dto/role.dto.js';
import type { RoleMembershipEntity } from './role-membership.entity.js';
import type { RoleEntity } from './role.entity.js';

const violations = async (cls: new () => object, body: unknown) =>
  (await validate(plainToInstance(cls, body) as object)).map((e) => [
    e.property,
    Object.values(e.constraints ?? {}),
  ]);

const at = new Date('2026-11-21T10:00:00.000Z');
const user = {
  id: 7,
  uuid: '0190c1d0-0000-7000-8000-000000000007',
  distinctId: 'd7',
  firstName: 'Ada',
  lastName: 'L',
  email: 'ada@example.com',
  isEmailVerified: false,
  hedgehogConfig: null,
  lastLogin: null,
} as unknown as UserEntity;
const role = {
  id: 'r1',
  organizationId: 'o1',
  name: 'Launch',
  createdAt: at,
  createdById: 7,
  createdBy: user,
} as RoleEntity;
const membership = {
  id: 'rm1',
  roleId: 'r1',
  userId: 7,
  user,
  organizationMemberId: 'm1',
  organizationMember: { id: 'm1', level: 8, joinedAt: at, updatedAt: at } as OrganizationMembershipEntity,
  joinedAt: at,
  updatedAt: null,
} as RoleMembershipEntity;

describe('roles', () => {
  it('answers a role field by field: its creator, its members, whether it is the default', () => {
    const dto = toRoleDto(role, [membership], 'r1');
    expect(dto).toEqual({
      id: 'r1',
      name: 'Launch',
      created_at: '2026-11-21T10:00:00.000Z',
      created_by: expect.objectContaining({ id: 7, uuid: user.uuid, email: 'ada@example.com' }),
      members: [
        {
          id: 'rm1',
          role_id: 'r1',
          organization_member: expect.objectContaining({
            id: 'm1',
            level: 8,
            user: expect.objectContaining({ id: 7 }),
          }),
          user: expect.objectContaining({ id: 7, first_name: 'Ada' }),
          joined_at: '2026-11-21T10:00:00.000Z',
          updated_at: null,
        },
      ],
      is_default: true,
    });
    expect(toRoleDto({ ...role, createdBy: null }, [], 'other')).toMatchObject({
      created_by: null,
      members: [],
      is_default: false,
    });
    expect(toRoleDto(role, [], null).is_default).toBe(false);
  });

  it('takes a trimmed name of 1 to 200 characters', async () => {
    expect(await violations(CreateRoleDto, { name: 'Launch' })).toEqual([]);
    expect(plainToInstance(CreateRoleDto, { name: '  Launch \n' }).name).toBe('Launch');
    expect(await violations(CreateRoleDto, { name: 'x'.repeat(200) })).toEqual([]);
    expect(await violations(UpdateRoleDto, {})).toEqual([]);
  });

  it('refuses a missing, blank, too long or non-string name, with the message the API answers', async () => {
    expect(await violations(CreateRoleDto, { name: '   ' })).toEqual([
      ['name', ['This field may not be blank.']],
    ]);
    expect(await violations(UpdateRoleDto, { name: '   ' })).toEqual([
      ['name', ['This field may not be blank.']],
    ]);
    expect(await violations(CreateRoleDto, { name: 'x'.repeat(201) })).toEqual([
      ['name', ['Ensure this field has no more than 200 characters.']],
    ]);
    expect((await violations(CreateRoleDto, { name: 7 }))[0]).toEqual([
      'name',
      expect.arrayContaining(['Must be a string.']),
    ]);
    expect((await violations(CreateRoleDto, {}))[0]?.[0]).toBe('name');
    expect((await violations(UpdateRoleDto, { name: null }))[0]?.[0]).toBe('name');
  });

  it('takes the user of a new role membership by uuid', async () => {
    expect(await violations(CreateRoleMembershipDto, { user_uuid: user.uuid })).toEqual([]);
    expect((await violations(CreateRoleMembershipDto, { user_uuid: 'nope' }))[0]).toEqual([
      'user_uuid',
      ['Must be a valid UUID.'],
    ]);
    expect((await violations(CreateRoleMembershipDto, {}))[0]?.[0]).toBe('user_uuid');
  });
});
