import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { isUuid, parseIntId } from './ids.js';

/**
 * Path ids, parsed once at the edge. A malformed id is 404 `not_found`, as PostHog answers (an id that cannot
 * exist is the same as one that does not), never 400. Use as `@Param('id', UuidPipe) id: string` or
 * `@Param('id', IntIdPipe) id: number`.
 */
@Injectable()
export class UuidPipe implements PipeTransform<string, string> {
  /** The uuid in lower case. */
  transform(value: string): string {
    if (!isUuid(value)) throw ApiError.notFound();
    return value.toLowerCase();
  }
}

/** A positive 32-bit integer id (`1` … `2147483647`) from a path segment; anything else is 404. */
@Injectable()
export class IntIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = parseIntId(value);
    if (id === null) throw ApiError.notFound();
    return id;
  }
}
