const READ_ONLY_FIELDS = Symbol('readOnlyFields');

/**
 * Names the fields of a resource that clients may read but not write. A request DTO carrying this decorator
 * answers such a field with 400 `read_only_field` instead of `unknown_field`.
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
