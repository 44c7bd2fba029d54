import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString, MaxLength, MinLength } from 'class-validator';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

const READ_ONLY = [
  'id',
  'mask_value',
  'created_at',
  'created_by',
  'last_used_at',
  'last_rolled_at',
  'value',
] as const;

/** The body of POST (PostHog's ProjectSecretAPIKeyRequest): read-only fields sent are ignored. */
@ReadOnlyFields(...READ_ONLY)
export class CreateProjectSecretApiKeyDto {
  @ApiProperty({
    example: 'Local evaluation',
    minLength: 1,
    maxLength: 40,
    description: 'A name for the key, unique within the project; trimmed, not blank.',
  })
  @Trim()
  @IsString({ message: 'Must be a string.' })
  @MinLength(1, { message: 'This field may not be blank.' })
  @MaxLength(40, { message: 'Ensure this field has no more than 40 characters.' })
  label: string;

  @ApiProperty({
    type: [String],
    example: ['feature_flag:read'],
    description:
      'What the key may do: explicit scopes among those a project secret API key may carry (`feature_flag:read`, ' +
      "for the server SDKs' local evaluation). `*` is refused.",
  })
  @IsArray({ message: 'Expected a list of scopes.' })
  @ArrayMinSize(1, { message: 'This field is required.' })
  @ArrayMaxSize(100, { message: 'Ensure this field has no more than 100 elements.' })
  @IsString({ each: true, message: 'Each scope must be a string.' })
  scopes: string[];
}

/** The body of PATCH and PUT: the fields given are changed (PostHog's update takes a partial body on both). */
@ReadOnlyFields(...READ_ONLY)
export class UpdateProjectSecretApiKeyDto {
  // No example: the request example changes the scopes only (a label must stay unique in the project).
  @ApiProperty({
    required: false,
    minLength: 1,
    maxLength: 40,
    description: 'A new name, unique in the project.',
  })
  @IsOmittable()
  @Trim()
  @IsString({ message: 'Must be a string.' })
  @MinLength(1, { message: 'This field may not be blank.' })
  @MaxLength(40, { message: 'Ensure this field has no more than 40 characters.' })
  label?: string;

  @ApiProperty({ required: false, type: [String], example: ['feature_flag:read'] })
  @IsOmittable()
  @IsArray({ message: 'Expected a list of scopes.' })
  @ArrayMinSize(1, { message: 'This field may not be empty.' })
  @ArrayMaxSize(100, { message: 'Ensure this field has no more than 100 elements.' })
  @IsString({ each: true, message: 'Each scope must be a string.' })
  scopes?: string[];
}
