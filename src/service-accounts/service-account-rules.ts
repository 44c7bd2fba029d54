import { ALL_SCOPES, grants, isScope, parseScopeList } from '../common/auth/scopes.js';

/** At most this many active keys a service account (rotation needs two at a time). */
export const MAX_KEYS_PER_SERVICE_ACCOUNT = 10;

/** What a service account's key gives, as requested (scopes as a list). */
export interface KeyRequest {
  scopes: readonly string[];
  projects: readonly number[];
  label: string;
}

/**
 * The scopes of a new key, normalised (`*` alone, else deduplicated and sorted), or why they are refused: an item
 * that is no scope (a comma inside an item included), `*` with others, none.
 */
export function keyScopes(scopes: readonly string[]): string[] | string {
  for (const scope of scopes) {
    if (scope !== ALL_SCOPES && !isScope(scope)) return `Unknown scope '${scope}'.`;
  }
  try {
    return parseScopeList(scopes.join(','));
  } catch (error) {
    return `${(error as Error).message.replace(/^./, (c) => c.toUpperCase())}.`;
  }
}

/**
 * The first of `scopes` the calling key does not hold itself (`*` only with `*`), or null: a service account never
 * gets more than the key that made it.
 */
export function scopeBeyondCaller(callerScopes: readonly string[], scopes: readonly string[]): string | null {
  for (const scope of scopes) {
    if (
      scope === ALL_SCOPES
        ? !callerScopes.includes(ALL_SCOPES)
        : !isScope(scope) || !grants(callerScopes, scope)
    ) {
      return scope;
    }
  }
  return null;
}

/**
 * Whether a calling key restricted to projects (`callerProjects`, null when not restricted) may give a key these
 * projects: only a non-empty subset of its own, so a service account never reaches further than its maker.
 */
export function projectsWithinCaller(
  callerProjects: readonly number[] | null,
  projects: readonly number[],
): boolean {
  if (callerProjects === null) return true;
  return projects.length > 0 && projects.every((p) => callerProjects.includes(p));
}
