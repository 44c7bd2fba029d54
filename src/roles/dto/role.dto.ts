import { ApiProperty } from '@nestjs/swagger';
import type { RoleEntity } from '../role.entity.js';

/** A role as the API returns it. */
export class RoleDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'Example', maxLength: 200 })
  name: string;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

export function toRoleDto(entity: RoleEntity): RoleDto {
  return { id: entity.id, name: entity.name, created_at: entity.createdAt.toISOString() };
}
