import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

/** Fields of an Organization that clients can read but never write. */
const READ_ONLY = [
  'id',
  'slug',
  'created_at',
  'updated_at',
  'membership_level',
  'plugins_access_level',
  'teams',
  'projects',
  'available_product_features',
  'metadata',
  'customer_id',
  'member_count',
];

const Name = () =>
  applyDecorators(
    Trim(),
    IsString({ message: 'Name must be a string.' }),
    MinLength(1, { message: 'Name may not be blank.' }),
    MaxLength(64, { message: 'Name must be at most 64 characters long.' }),
  );

/** The optional writable fields, shared by create and update. */
abstract class OrganizationOptionsDto {
  @ApiPropertyOptional({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'Id of the uploaded logo.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'Must be a valid UUID.' })
  logo_media_id?: string | null;

  @ApiPropertyOptional({ type: Boolean, description: 'E-mail members when someone joins.', default: true })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  is_member_join_email_enabled?: boolean;

  @ApiPropertyOptional({
    type: Boolean,
    description: 'Require two-factor authentication of members.',
    default: false,
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  enforce_2fa?: boolean;
}

@ReadOnlyFields(...READ_ONLY)
export class CreateOrganizationDto extends OrganizationOptionsDto {
  @ApiProperty({ minLength: 1, maxLength: 64, example: 'Acme', description: 'Trimmed; 1 to 64 characters.' })
  @IsDefined()
  @Name()
  name: string;
}

@ReadOnlyFields(...READ_ONLY)
export class UpdateOrganizationDto extends OrganizationOptionsDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 64,
    example: 'Acme',
    description: 'Trimmed; 1 to 64 characters.',
  })
  @IsOmittable()
  @Name()
  name?: string;
}
