const READ_ONLY_FIELDS = Symbol('readOnlyFields');

/**
 * Names the fields of a resource that clients may read but not write. As Django REST framework does, a request
 * body may carry them (a client sends back what it read, changed in places): the validation pipe drops them
 * before validating, so they are neither errors nor ever assigned. A subclass inherits its parent's list.
 */
export function ReadOnlyFields(...fields: string[]): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(READ_ONLY_FIELDS, new Set(fields), target);
  };
}

export function readOnlyFieldsOf(target: object | undefined): Set<string> {
  if (!target) return new Set();
  return (Reflect.getMetadata(READ_ONLY_FIELDS, target) as Set<string> | undefined) ?? new Set();
}

/** Nested DTOs deeper than this are left alone (the global input checks bound the depth long before). */
const MAX_DEPTH = 32;

/**
 * Deletes, in place, the read-only fields of `value` (an instance of a request DTO class) and of the DTO
 * instances nested in it (`@ValidateNested` properties and arrays of them). Plain objects (free-form JSON
 * fields) are never touched: a key named like a read-only field is data there.
 */
export function stripReadOnlyFields(value: unknown, depth = 0): void {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) stripReadOnlyFields(item, depth + 1);
    return;
  }
  const ctor = (value as object).constructor;
  if (!ctor || ctor === Object) return;
  const record = value as Record<string, unknown>;
  for (const field of readOnlyFieldsOf(ctor)) delete record[field];
  for (const key of Object.keys(record)) stripReadOnlyFields(record[key], depth + 1);
}
