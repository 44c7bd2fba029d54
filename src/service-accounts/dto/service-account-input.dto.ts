import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

/** The fields of a new key of a service account (its first one, or another): read-only fields sent are ignored. */
@ReadOnlyFields('id', 'mask_value', 'scoped_organizations', 'created_at', 'last_used_at', 'value')
export class CreateServiceAccountKeyDto {
  @ApiProperty({
    type: [String],
    example: ['organization:read', 'batch_export:write'],
    description:
      "`['*']` or scopes (`<object>:read`/`<object>:write`), as a personal API key's. The calling key must hold " +
      'each of them itself (403 otherwise): a service account never gets more than its maker could do.',
  })
  @IsArray({ message: 'Expected a list of scopes.' })
  @ArrayMinSize(1, { message: 'This field is required.' })
  @ArrayMaxSize(200, { message: 'Ensure this field has no more than 200 elements.' })
  @IsString({ each: true, message: 'Each scope must be a string.' })
  scopes: string[];

  @ApiProperty({
    required: false,
    type: [Number],
    example: [],
    description:
      'Project ids of this organization the key is restricted to; omitted or `[]`: every project of the ' +
      'organization. A calling key restricted to projects must give a subset of its own.',
  })
  @IsOptional()
  @IsArray({ message: 'Expected a list of project ids.' })
  @ArrayMaxSize(100, { message: 'Ensure this field has no more than 100 elements.' })
  @IsInt({ each: true, message: 'Each project id must be an integer.' })
  @Min(1, { each: true, message: 'Each project id must be an integer.' })
  @Max(2147483647, { each: true, message: 'Each project id must be an integer.' })
  scoped_teams?: number[];

  @ApiProperty({ required: false, example: 'ci', maxLength: 40, description: 'A name for the key.' })
  @IsOptional()
  @Trim()
  @IsString({ message: 'Must be a string.' })
  @MaxLength(40, { message: 'Ensure this field has no more than 40 characters.' })
  label?: string;
}

/** The body of POST …/service_accounts/: read-only fields sent are ignored. */
@ReadOnlyFields('id', 'user', 'created_at', 'created_by', 'keys', 'key', 'mask_value', 'scoped_organizations')
export class CreateServiceAccountDto extends CreateServiceAccountKeyDto {
  @ApiProperty({
    example: 'Nightly export job',
    minLength: 1,
    maxLength: 150,
    description: 'Trimmed; not blank.',
  })
  @Trim()
  @IsString({ message: 'Must be a string.' })
  @MinLength(1, { message: 'This field may not be blank.' })
  @MaxLength(150, { message: 'Ensure this field has no more than 150 characters.' })
  name: string;

  @ApiProperty({
    required: false,
    type: 'integer',
    enum: [1, 8],
    example: 1,
    description:
      'Its membership level: 1 member (the default) or 8 admin. A service account is never an owner.',
  })
  @IsOptional()
  @IsIn([1, 8], { message: 'Must be one of 1, 8 (a service account is never an owner).' })
  level?: 1 | 8;
}
