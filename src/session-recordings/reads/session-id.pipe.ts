import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error.js';
import { SESSION_ID_MAX_LENGTH } from '../session-recording.entity.js';

const SESSION_ID = /^[A-Za-z0-9-]+$/;

/** Whether a string can be a session id (what capture accepts). */
export const isSessionId = (id: string): boolean => id.length <= SESSION_ID_MAX_LENGTH && SESSION_ID.test(id);

/** A recording's path id (its session id); one capture could never have stored is 404. */
@Injectable()
export class SessionIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isSessionId(value)) throw ApiError.notFound();
    return value;
  }
}
