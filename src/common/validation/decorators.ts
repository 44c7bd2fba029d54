import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';

/**
 * The field may be left out, but when present it is validated, `null` included (unlike `@IsOptional`, which
 * lets `null` through). For PATCH bodies of non-nullable fields.
 */
export const IsOmittable = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

/** Trims surrounding white space of string values before validation. */
export const Trim = (): PropertyDecorator =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value)),
  );
