/**
 * The one vocabulary of API key scopes. A scope is `<object>:read`, `<object>:write`, or `*` (everything).
 * A write scope grants the read scope of the same object. The objects are declared by the features that
 * protect them (`scopes` of their manifest) and registered from the list of features at start
 * (`registerScopeObjects`); the compiler learns them from the same feature file, which adds its objects to
 * `ScopeObjects` (`declare module '../common/auth/scopes.js' { interface ScopeObjects { annotation: true } }`),
 * so `@RequireScopes` only accepts declared scopes.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the features' declarations
export interface ScopeObjects {}

export type ScopeObject = keyof ScopeObjects & string;
export type ScopeAction = 'read' | 'write';
export type Scope = `${ScopeObject}:${ScopeAction}`;
export const ALL_SCOPES = '*';

/** The registered objects, in the order of the features (live arrays: filled by registerScopeObjects). */
export const SCOPE_OBJECTS: ScopeObject[] = [];
export const READ_SCOPES: Scope[] = [];
export const WRITE_SCOPES: Scope[] = [];
/** Every read scope, then every write scope. */
export const KNOWN_SCOPES: Scope[] = [];

/** Adds objects to the vocabulary (an object registered twice is kept once). */
export function registerScopeObjects(objects: readonly ScopeObject[]): void {
  for (const object of objects) {
    if (SCOPE_OBJECTS.includes(object)) continue;
    if (!/^[a-z][a-z0-9_]*$/.test(object)) throw new Error(`scope object '${object}' is not snake_case`);
    SCOPE_OBJECTS.push(object);
  }
  READ_SCOPES.splice(0, READ_SCOPES.length, ...SCOPE_OBJECTS.map((o) => `${o}:read` as const));
  WRITE_SCOPES.splice(0, WRITE_SCOPES.length, ...SCOPE_OBJECTS.map((o) => `${o}:write` as const));
  KNOWN_SCOPES.splice(0, KNOWN_SCOPES.length, ...READ_SCOPES, ...WRITE_SCOPES);
}

export function isScope(value: string): value is Scope {
  return (KNOWN_SCOPES as readonly string[]).includes(value);
}

/** Whether a key holding `granted` may perform an operation requiring `required`. */
export function grants(granted: readonly string[], required: Scope): boolean {
  if (granted.includes(ALL_SCOPES) || granted.includes(required)) return true;
  const [object, action] = required.split(':');
  return action === 'read' && granted.includes(`${object}:write`);
}

/** The first of `required` that `granted` does not cover, or null when all are covered. */
export function missingScope(granted: readonly string[], required: readonly Scope[]): Scope | null {
  return required.find((scope) => !grants(granted, scope)) ?? null;
}

/**
 * Parses an operator's scope list: `*`, or a comma list of known scopes. Returns the normalised list
 * (deduplicated, sorted) or throws naming the first unknown scope.
 */
export function parseScopeList(input: string): string[] {
  const items = input
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) throw new Error('at least one scope is required');
  if (items.includes(ALL_SCOPES)) {
    if (new Set(items).size > 1) throw new Error("'*' cannot be combined with other scopes");
    return [ALL_SCOPES];
  }
  for (const item of items) {
    if (!isScope(item)) throw new Error(`unknown scope '${item}' (known: *, ${KNOWN_SCOPES.join(', ')})`);
  }
  return [...new Set(items)].sort();
}
