/**
 * Access control vocabulary (PostHog's `posthog/rbac/user_access_control.py`): the levels a rule may give, the
 * resources that carry resource-level rules, and the kinds of objects that carry object-level rules. Read by the
 * access rules' table and resolver (memberships), the services that enforce them and the API that edits them,
 * so it lives below all of them. docs/security.md has the table of what each level allows.
 */

/** Levels of a project-level rule, lowest first (PostHog's ACCESS_CONTROL_LEVELS_MEMBER). */
export const PROJECT_ACCESS_LEVELS = ['none', 'member', 'admin'] as const;
export type ProjectAccessLevel = (typeof PROJECT_ACCESS_LEVELS)[number];

/** Levels of a resource- or object-level rule, lowest first (PostHog's ACCESS_CONTROL_LEVELS_RESOURCE). */
export const RESOURCE_ACCESS_LEVELS = ['none', 'viewer', 'editor', 'manager'] as const;
export type ResourceAccessLevel = (typeof RESOURCE_ACCESS_LEVELS)[number];

export type AccessLevel = ProjectAccessLevel | ResourceAccessLevel;

/**
 * The resources whose routes follow resource-level rules (`resource_access_controls`): recordings (and their
 * playlists and sharing), batch exports, plugin configs, and the events read (`query`, with persons).
 */
export const ACCESS_CONTROL_RESOURCES = ['session_recording', 'batch_export', 'plugin', 'query'] as const;
export type AccessControlResource = (typeof ACCESS_CONTROL_RESOURCES)[number];

/**
 * Kinds of objects that carry object-level rules, each with the resource whose level it falls back to
 * (PostHog's RESOURCE_INHERITANCE_MAP: a playlist follows the recordings).
 */
export const OBJECT_RESOURCES = {
  session_recording_playlist: 'session_recording',
  batch_export: 'batch_export',
} as const satisfies Record<string, AccessControlResource>;
export type ObjectResource = keyof typeof OBJECT_RESOURCES;

/** What every resource-level rule and object rule defaults to without a rule (PostHog's default_access_level). */
export const DEFAULT_RESOURCE_ACCESS_LEVEL: ResourceAccessLevel = 'editor';

/**
 * How a user came by their level (PostHog's AccessSource): a rule naming the member, one naming one of its roles,
 * the organization level (admins and owners), having created the object, or the project's default.
 */
export const ACCESS_SOURCES = [
  'creator',
  'organization_admin',
  'explicit_member',
  'explicit_role',
  'project_admin',
  'default',
] as const;
export type AccessSource = (typeof ACCESS_SOURCES)[number];

/** Whether `level` reaches `required` on the project scale. */
export function projectLevelAtLeast(level: ProjectAccessLevel, required: ProjectAccessLevel): boolean {
  return PROJECT_ACCESS_LEVELS.indexOf(level) >= PROJECT_ACCESS_LEVELS.indexOf(required);
}

/** Whether `level` reaches `required` on the resource scale. */
export function resourceLevelAtLeast(level: ResourceAccessLevel, required: ResourceAccessLevel): boolean {
  return RESOURCE_ACCESS_LEVELS.indexOf(level) >= RESOURCE_ACCESS_LEVELS.indexOf(required);
}
