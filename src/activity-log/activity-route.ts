import { type ActivityChange, maskSecrets } from '../common/activity/activity-context.js';
/**
 * What an API write is, from its route: the PostHog scope of the object it touches, the object's id, and the
 * activity (`created`, `updated`, `deleted`, or the action a route names: `pause`, `verify`, `sharing_refresh`).
 * Pure, so the rules are unit-tested (activity-route.spec.ts).
 */

/** PostHog's scope of each resource segment of a route. */
const SCOPES: Record<string, string> = {
  organizations: 'Organization',
  projects: 'Project',
  environments: 'Project',
  members: 'OrganizationMembership',
  invites: 'OrganizationInvite',
  domains: 'OrganizationDomain',
  roles: 'Role',
  service_accounts: 'ServiceAccount',
  batch_exports: 'BatchExport',
  pipeline_destinations: 'Plugin',
  pipeline_frontend_apps: 'Plugin',
  pipeline_import_apps: 'Plugin',
  pipeline_transformations: 'Plugin',
  plugins: 'Plugin',
  plugin_configs: 'PluginConfig',
  project_secret_api_keys: 'ProjectSecretAPIKey',
  recording_access_rules: 'RecordingAccessRule',
  session_recording_playlists: 'SessionRecordingPlaylist',
  session_recordings: 'Replay',
  persons: 'Person',
  users: 'User',
  personal_api_keys: 'PersonalAPIKey',
  Users: 'User',
  Groups: 'Role',
};

/** Trailing segments that edit who may access the object before them: entries of scope `AccessControl`. */
const ACCESS_CONTROL_SEGMENTS = new Set(['access_controls', 'resource_access_controls']);

export interface RouteActivity {
  scope: string;
  /** The id in the route after the resource segment, or null (a create: the answer's id is taken then). */
  itemId: string | null;
  activity: string;
  /** The project of a project route (`/api/projects/:project_id/…`, `/api/projects/:id`). */
  teamId: number | null;
  /** The organization of an organization route. */
  organizationId: string | null;
  /** The domain of a SCIM route (`/scim/v2/:domain_id/…`), whose organization the entry belongs to. */
  domainId: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const VERBS: Record<string, string> = {
  POST: 'created',
  PUT: 'updated',
  PATCH: 'updated',
  DELETE: 'deleted',
};

/** A route path's segments without the empty ones (`/api/projects/:project_id` → api, projects, :project_id). */
function segmentsOf(path: string): string[] {
  return path.split('/').filter(Boolean);
}

function parseTeam(value: string | undefined): number | null {
  return value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : null;
}

/**
 * The activity of `method` on the route `routePath` (Express's pattern, `:name` parameters) with its `params`.
 */
export function routeActivity(
  method: string,
  routePath: string,
  params: Readonly<Record<string, string | undefined>>,
): RouteActivity {
  const segments = segmentsOf(routePath);
  const valueOf = (segment: string | undefined) =>
    segment?.startsWith(':') ? (params[segment.slice(1)] ?? null) : null;
  let last = -1;
  segments.forEach((segment, i) => {
    if (!segment.startsWith(':') && SCOPES[segment]) last = i;
  });
  let scope = last >= 0 ? SCOPES[segments[last]] : 'API';
  let itemId = last >= 0 ? valueOf(segments[last + 1]) : null;
  const trailing = segments.slice(last + (itemId === null ? 1 : 2)).filter((s) => !s.startsWith(':'));
  const verb = VERBS[method] ?? method.toLowerCase();
  let activity = verb;
  if (trailing.length && ACCESS_CONTROL_SEGMENTS.has(trailing[0])) {
    // The access rules of the object before them: scope AccessControl, the object's id, what kind it is.
    scope = 'AccessControl';
    activity = 'updated';
  } else if (trailing.length) {
    activity = method === 'POST' ? trailing.join('_') : `${trailing.join('_')}_${verb}`;
  }
  let teamId: number | null = null;
  let organizationId: string | null = null;
  const root = segments[1];
  if (segments[0] === 'api' && (root === 'projects' || root === 'environments')) {
    teamId = parseTeam(valueOf(segments[2]) ?? undefined);
  }
  if (segments[0] === 'api' && root === 'organizations') {
    const value = valueOf(segments[2]);
    organizationId = value && UUID.test(value) ? value.toLowerCase() : null;
    if (segments[3] === 'projects' && scope === 'Project')
      teamId = parseTeam(valueOf(segments[4]) ?? undefined);
  }
  const domain = segments[0] === 'scim' ? valueOf(segments[2]) : null;
  const domainId = domain && UUID.test(domain) ? domain.toLowerCase() : null;
  if (itemId !== null) itemId = itemId.slice(0, 200);
  return { scope, itemId, activity, teamId, organizationId, domainId };
}

/** Most bytes of JSON a body may take in an entry's `changes`; a larger one is replaced by a marker. */
export const CHANGES_MAX_BYTES = 16_384;

/**
 * The body as an entry keeps it: whole up to CHANGES_MAX_BYTES of JSON; else each field's value up to 1,000 bytes,
 * larger ones replaced by `{ "truncated": true, "bytes": n }`, and at most 100 fields (a write's body may be
 * megabytes; its entry stays small).
 */
function boundedBody(sent: Record<string, unknown>): Record<string, unknown> {
  if (Buffer.byteLength(JSON.stringify(sent)) <= CHANGES_MAX_BYTES) return sent;
  const kept: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(sent).slice(0, 100)) {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
    kept[field] = bytes <= 1000 ? value : { truncated: true, bytes };
  }
  return kept;
}

/**
 * The changes of a write its code did not describe: the fields sent (an update: each as `changed`, its value
 * before unknown), the object sent (a create). Never the answer: a create's answer may hold a secret shown once.
 */
export function fallbackChanges(
  method: string,
  scope: string,
  created: boolean,
  body: unknown,
): ActivityChange[] | null {
  if (!body || typeof body !== 'object' || Array.isArray(body) || !Object.keys(body).length) return null;
  const sent = boundedBody(maskSecrets(body) as Record<string, unknown>);
  if (created) return [{ type: scope, action: 'created', field: null, before: null, after: sent }];
  if (method === 'PATCH' || method === 'PUT') {
    return Object.entries(sent)
      .slice(0, 100)
      .map(([field, after]) => ({ type: scope, action: 'changed', field, before: null, after }));
  }
  return null;
}
