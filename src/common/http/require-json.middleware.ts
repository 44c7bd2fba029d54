import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors/api-error.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** JSON media types: application/json and application/*+json, any parameters (charset). */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** 415 for a POST/PUT/PATCH to the JSON API whose body is not declared as JSON (docs/decisions.md §1). */
export function requireJsonBody(req: Request, _res: Response, next: NextFunction): void {
  if (BODY_METHODS.has(req.method) && hasBody(req) && !isJsonContentType(req.headers['content-type'])) {
    next(
      new ApiError(
        415,
        'unsupported_media_type',
        'Unsupported media type: send the body as application/json.',
      ),
    );
    return;
  }
  next();
}
