import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { isUuid } from '../common/validation/ids.js';

/** The path segment that names the caller instead of a user uuid. */
export const ME = '@me';

/** `:user__uuid` of the members routes: `@me`, or a user uuid (lower-cased); anything else is 404. */
@Injectable()
export class UserRefPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (value === ME) return ME;
    if (!isUuid(value)) throw ApiError.notFound();
    return value.toLowerCase();
  }
}
