import { ApiError } from '../errors/api-error.js';

/**
 * A broken input rule, found by a pure checker (`settingsViolation`, `configViolation`, `urlViolation`…): the
 * 400 it becomes, without the HTTP. Checkers return the first one or null; services pass it to
 * `throwIfViolated`, so every rule module speaks the same vocabulary as the validation pipe.
 */
export interface Violation {
  /** A sentence for the client; names the problem, never a secret value. */
  detail: string;
  /** The field, nested names joined with `__`; null for the body as a whole. */
  attr: string | null;
  /** `invalid_input`, `required`, `unknown_field`, `max_length`, `verification_required`… */
  code: string;
}

/** A Violation; the code defaults to `invalid_input`. */
export function violation(detail: string, attr: string | null, code = 'invalid_input'): Violation {
  return { detail, attr, code };
}

/** The 400 ApiError of a violation. */
export function violationError(found: Violation): ApiError {
  return ApiError.validation(found.detail, found.attr, found.code);
}

/** Throws the 400 of the violation, if any. */
export function throwIfViolated(found: Violation | null | undefined): void {
  if (found) throw violationError(found);
}

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
