import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsString, MaxLength, MinLength } from 'class-validator';
import { IsOmittable, Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';

/** Body of `PATCH /api/projects/:id`: every field optional; the fields a Project shows but never takes. */
@ReadOnlyFields('id', 'uuid', 'organization', 'api_token', 'timezone', 'created_at')
export class UpdateProjectDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    example: 'Web shop',
    description: 'Trimmed; 1 to 200 characters.',
  })
  @IsOmittable()
  @Trim()
  @IsString({ message: 'Name must be a string.' })
  @MinLength(1, { message: 'Name may not be blank.' })
  @MaxLength(200, { message: 'Name must be at most 200 characters long.' })
  name?: string;

  @ApiPropertyOptional({
    type: Boolean,
    description:
      'Record sessions of sites using this project token (served to the SDK as `sessionRecording` in its remote config; `false` turns recording off in browsers at their next page load).',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  session_recording_opt_in?: boolean;
}
