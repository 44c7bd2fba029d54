/**
 * The one registry of API key scopes. A scope is `<object>:read`, `<object>:write`, or `*` (everything).
 * A write scope grants the read scope of the same object. To protect a new kind of object, add it to
 * SCOPE_OBJECTS; `@RequireScopes` only accepts scopes from this list (checked by the compiler).
 */
export const SCOPE_OBJECTS = [
  'organization',
  'organization_member',
  'project',
  'batch_export',
  'plugin',
  'session_recording',
  'sharing_configuration',
  'query',
] as const;

export type ScopeObject = (typeof SCOPE_OBJECTS)[number];
export type ScopeAction = 'read' | 'write';
export type Scope = `${ScopeObject}:${ScopeAction}`;
export const ALL_SCOPES = '*';

export const READ_SCOPES: readonly Scope[] = SCOPE_OBJECTS.map((o) => `${o}:read` as const);
export const WRITE_SCOPES: readonly Scope[] = SCOPE_OBJECTS.map((o) => `${o}:write` as const);
export const KNOWN_SCOPES: readonly Scope[] = [...READ_SCOPES, ...WRITE_SCOPES];

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
