import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

/** The body of POST: read-only fields sent are ignored. */
@ReadOnlyFields('id', 'created_at')
export class CreateRoleDto {
  @ApiProperty({ example: 'Example', minLength: 1, maxLength: 200, description: 'Trimmed; not blank.' })
  @Trim()
  @IsString({ message: 'Must be a string.' })
  @MinLength(1, { message: 'This field may not be blank.' })
  @MaxLength(200, { message: 'Ensure this field has no more than 200 characters.' })
  name: string;
}
