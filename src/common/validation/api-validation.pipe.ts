import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { readOnlyFieldsOf } from './read-only-fields.decorator.js';

const REQUIRED_CONSTRAINTS = new Set(['isDefined', 'isNotEmpty']);

/** The first failing constraint of a (possibly nested) validation error, with its `__`-joined path. */
function firstFailure(
  error: ValidationError,
  path: string[] = [],
): { error: ValidationError; path: string[] } {
  const here = [...path, error.property];
  if (error.constraints && Object.keys(error.constraints).length) return { error, path: here };
  const child = error.children?.[0];
  return child ? firstFailure(child, here) : { error, path: here };
}

/** Maps class-validator errors to the service's error body: one field, one code, one sentence. */
export function validationErrorToApiError(errors: ValidationError[]): ApiError {
  const { error, path } = firstFailure(errors[0]);
  const attr = path.join('__');
  const constraints = error.constraints ?? {};
  const names = Object.keys(constraints);
  if (names.includes('whitelistValidation')) {
    const readOnly = readOnlyFieldsOf(error.target?.constructor);
    return readOnly.has(error.property)
      ? ApiError.validation(`Field '${attr}' is read-only.`, attr, 'read_only_field')
      : ApiError.validation(`Unknown field '${attr}'.`, attr, 'unknown_field');
  }
  if (error.value === undefined && (names.some((n) => REQUIRED_CONSTRAINTS.has(n)) || names.length)) {
    return ApiError.validation('This field is required.', attr, 'required');
  }
  const first = names[0];
  const code = first === 'maxLength' ? 'max_length' : first === 'minLength' ? 'min_length' : 'invalid_input';
  return ApiError.validation(capitalise(constraints[first] ?? 'Invalid value.'), attr, code);
}

function capitalise(sentence: string): string {
  const s = sentence.charAt(0).toUpperCase() + sentence.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * The global validation pipe. Bodies are validated strictly (unknown and read-only fields rejected, decisions
 * §1) and must be JSON objects; query strings are validated but extra parameters are ignored, because clients
 * add their own (cache busters, tracking).
 */
@Injectable()
export class ApiValidationPipe implements PipeTransform {
  private readonly strict = new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validateCustomDecorators: false,
    exceptionFactory: validationErrorToApiError,
    validationError: { target: true, value: true },
  });

  private readonly lenient = new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    exceptionFactory: validationErrorToApiError,
    validationError: { target: true, value: true },
  });

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'body' && isDtoClass(metadata.metatype)) {
      if (value === undefined || value === null) value = {};
      if (typeof value !== 'object' || Array.isArray(value)) {
        throw ApiError.validation('Expected a JSON object in the request body.', null, 'invalid_input');
      }
      return this.strict.transform(value, metadata);
    }
    if (metadata.type === 'query') return this.lenient.transform(value, metadata);
    return this.strict.transform(value, metadata);
  }
}

function isDtoClass(metatype: unknown): boolean {
  return (
    typeof metatype === 'function' && ![String, Boolean, Number, Array, Object].includes(metatype as never)
  );
}
