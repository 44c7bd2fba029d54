import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { ApiError } from '../errors/api-error.js';
import { attrOf, escapeText, findInvalidInput, type InputViolation } from './text-input.js';

/** Settings of the global input check. */
export interface InputCheckOptions {
  /** Deepest nesting of objects and arrays accepted in a body (the JSON parser enforces it on raw text too). */
  maxDepth: number;
  /** Path prefixes whose requests are checked. */
  prefixes: readonly string[];
}

export const INPUT_CHECK_OPTIONS = Symbol('INPUT_CHECK_OPTIONS');

/** Where the JSON API lives; the public capture and SDK routes clean their own input. */
export const CHECKED_PREFIXES = ['/api', '/scim'];

const PROBLEMS: Record<InputViolation['problem'], string> = {
  nul: 'contains the NUL character (U+0000), which is not accepted',
  surrogate: 'contains an unpaired UTF-16 surrogate, which is not valid Unicode',
  depth: 'is nested too deeply',
};

/** The 400 for a violation found in the request's `source`, naming the field as `attr` does. */
export function inputError(violation: InputViolation, source: 'path' | 'query' | 'body'): ApiError {
  const attr = attrOf(violation.path);
  const what = violation.key
    ? `A key of ${source === 'body' ? 'the body' : `the ${source}`}`
    : attr
      ? `Field '${attr}'`
      : 'The request body';
  return ApiError.validation(`${what} ${PROBLEMS[violation.problem]}.`, attr, 'invalid_input');
}

/**
 * The name of the first query parameter whose key or value holds percent-escapes that are not UTF-8 (the query
 * parser would silently turn them into U+FFFD), or null. The name is decoded leniently for the error's `attr`.
 */
export function undecodableQueryParameter(url: string): string | null {
  const start = url.indexOf('?');
  if (start < 0) return null;
  for (const pair of url.slice(start + 1).split('&')) {
    const eq = pair.indexOf('=');
    const [key, value] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    if (!decodes(key) || !decodes(value)) {
      return escapeText(new URLSearchParams(`${key}=`).keys().next().value ?? key);
    }
  }
  return null;
}

function decodes(component: string): boolean {
  if (!component.includes('%')) return true;
  try {
    // A `%` that starts no escape stays a literal `%` (as the query parser keeps it); escapes must be UTF-8.
    decodeURIComponent(component.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
    return true;
  } catch {
    return false;
  }
}

/**
 * The one input check of the JSON API, before any validation pipe or handler: every path parameter, query
 * value and body string (object keys included, at any depth) is refused with 400 `invalid_input` naming the
 * field when it holds NUL or an unpaired surrogate (docs/decisions.md §1), and a body nested deeper than the limit is
 * refused too (the JSON parser already refuses such text; this covers bodies from any other parser).
 *
 * Deliberately separate from the validation pipe: it knows nothing of DTOs, and DTO rules can change without
 * touching it.
 */
@Injectable()
export class InputCheckInterceptor implements NestInterceptor {
  constructor(@Inject(INPUT_CHECK_OPTIONS) private readonly options: InputCheckOptions) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') this.check(context.switchToHttp().getRequest<Request>());
    return next.handle();
  }

  check(req: Request): void {
    const path = req.path;
    if (!this.options.prefixes.some((p) => path === p || path.startsWith(`${p}/`))) return;
    const { maxDepth } = this.options;
    const undecodable = undecodableQueryParameter(req.originalUrl);
    if (undecodable !== null) {
      throw ApiError.validation(
        `Field '${undecodable}' is not valid percent-encoded UTF-8.`,
        undecodable,
        'invalid_input',
      );
    }
    const sources: ['path' | 'query' | 'body', unknown][] = [
      ['path', { ...req.params }],
      ['query', req.query],
      ['body', req.body],
    ];
    for (const [source, value] of sources) {
      // Path and query values are flat (strings, or arrays of strings for repeated query parameters).
      const violation = findInvalidInput(value, source === 'body' ? maxDepth : 3);
      if (violation) throw inputError(violation, source);
    }
  }
}
