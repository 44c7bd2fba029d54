import { ApiProperty, OmitType } from '@nestjs/swagger';
import { IsDefined, IsString, MaxLength, MinLength } from 'class-validator';
import { Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import { PROJECT_READ_ONLY_FIELDS, UpdateProjectDto } from './update-project.dto.js';

/**
 * Body of `POST /api/projects/` and `POST /api/organizations/:organization_id/projects/`: `name`, and any of the
 * settings `PATCH` takes (those left out take their defaults: session recording off, `anonymize_ips` the
 * organization's `default_anonymize_ips`).
 */
@ReadOnlyFields(...PROJECT_READ_ONLY_FIELDS)
export class CreateProjectDto extends OmitType(UpdateProjectDto, ['name'] as const) {
  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    example: 'Web shop',
    description: 'Trimmed; 1 to 200 characters.',
  })
  @IsDefined()
  @Trim()
  @IsString({ message: 'Name must be a string.' })
  @MinLength(1, { message: 'Name may not be blank.' })
  @MaxLength(200, { message: 'Name must be at most 200 characters long.' })
  name: string;
}
