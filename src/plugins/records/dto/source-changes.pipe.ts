import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '../../../common/errors/api-error.js';
import { isPlainObject } from '../../../common/validation/violation.js';
import type { SourceChanges } from '../../rules/plugin-rules.js';

/** The `update_source` body must be a JSON object (file name → text or null); anything else is 400. */
@Injectable()
export class SourceChangesPipe implements PipeTransform<unknown, SourceChanges> {
  transform(body: unknown): SourceChanges {
    if (!isPlainObject(body)) {
      throw ApiError.validation('Expected a JSON object mapping file names to text or null.');
    }
    return body;
  }
}
