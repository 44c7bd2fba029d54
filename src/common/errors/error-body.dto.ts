import { ApiProperty } from '@nestjs/swagger';
import type { ErrorBody, ErrorType } from './api-error.js';

export class ErrorBodyDto implements ErrorBody {
  @ApiProperty({
    enum: ['validation_error', 'authentication_error', 'invalid_request', 'throttled_error', 'server_error'],
    example: 'validation_error',
  })
  type: ErrorType;

  @ApiProperty({ example: 'invalid_input', description: 'Machine-readable error code.' })
  code: string;

  @ApiProperty({ example: 'This field is required.', description: 'Human-readable sentence.' })
  detail: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'name',
    description: 'The field the error is about; nested fields joined with `__`.',
  })
  attr: string | null;
}
