import {
  type ArgumentMetadata,
  Injectable,
  type PipeTransform,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import {
  escapeReservedKeys,
  restoreReservedKeys,
  unescapeReservedKey,
  unescapeReservedKeysIn,
} from '../input/reserved-keys.js';
import { readOnlyFieldsOf, stripReadOnlyFields } from './read-only-fields.decorator.js';

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
  const attr = path.map(unescapeReservedKey).join('__');
  const constraints = error.constraints ?? {};
  const names = Object.keys(constraints);
  if (names.includes('whitelistValidation')) {
    const readOnly = readOnlyFieldsOf(error.target?.constructor);
    return readOnly.has(unescapeReservedKey(error.property))
      ? ApiError.validation(`Field '${attr}' is read-only.`, attr, 'read_only_field')
      : ApiError.validation(`Unknown field '${attr}'.`, attr, 'unknown_field');
  }
  if (error.value === undefined && (names.some((n) => REQUIRED_CONSTRAINTS.has(n)) || names.length)) {
    return ApiError.validation('This field is required.', attr, 'required');
  }
  const first = names[0];
  const code = first === 'maxLength' ? 'max_length' : first === 'minLength' ? 'min_length' : 'invalid_input';
  return ApiError.validation(
    capitalise(unescapeReservedKeysIn(constraints[first] ?? 'Invalid value.')),
    attr,
    code,
  );
}

function capitalise(sentence: string): string {
  const s = sentence.charAt(0).toUpperCase() + sentence.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * Nest's ValidationPipe, with the read-only fields of the DTO (and of the DTOs nested in it) dropped from the
 * transformed value before class-validator sees it: a body carrying them validates as if they were absent, and
 * the handler never receives them.
 */
class ReadOnlyIgnoringValidationPipe extends ValidationPipe {
  protected override validate(
    object: object,
    validatorOptions?: Parameters<ValidationPipe['validate']>[1],
  ): ReturnType<ValidationPipe['validate']> {
    stripReadOnlyFields(object);
    return super.validate(object, validatorOptions);
  }
}

/**
 * The global validation pipe. Bodies must be JSON objects and are validated strictly: a field in neither the
 * writable nor the read-only fields of the DTO is 400 `unknown_field`; read-only fields are ignored, as Django
 * REST framework ignores them, so a client can send back what it read (docs/decisions.md §1). Query strings are
 * validated but extra parameters are ignored, because clients add their own (cache busters, tracking).
 */
@Injectable()
export class ApiValidationPipe implements PipeTransform {
  private readonly strict = new ReadOnlyIgnoringValidationPipe({
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

  /**
   * Reserved object keys (`__proto__`, `constructor`, …) pass the transformation as plain names. The value of a
   * custom parameter decorator (the caller's principal, the page parameters) is not validated
   * (`validateCustomDecorators: false`): it is returned as it is, without being walked twice for reserved keys.
   */
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'custom') return value;
    return restoreReservedKeys(await this.transformEscaped(escapeReservedKeys(value), metadata));
  }

  private transformEscaped(value: unknown, metadata: ArgumentMetadata): unknown {
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
