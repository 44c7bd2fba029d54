/**
 * Field-level differences of plugin records for the activity history. Values are compared as JSON with object
 * keys in any order (jsonb does not keep the order a client sent).
 */
import type { PluginChange } from './plugin-activity.entity.js';
import type { PluginEntity } from '../records/plugin.entity.js';

/** The JSON text of a value with object keys sorted, so equal values have equal texts. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The fields of a record that the history follows, by their API names. */
export function trackedFields(entity: Partial<PluginEntity>): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    plugin_type: entity.pluginType,
    name: entity.name,
    description: entity.description,
    url: entity.url,
    icon: entity.icon,
    config_schema: entity.configSchema,
    tag: entity.tag,
    latest_tag: entity.latestTag,
    is_global: entity.isGlobal,
    capabilities: entity.capabilities,
    metrics: entity.metrics,
    public_jobs: entity.publicJobs,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

/**
 * The changes from `before` to `after` (field maps from `trackedFields`): a field only in `after` is
 * `created`, only in `before` `deleted`, in both with different values `changed`. Unchanged fields are left out.
 */
export function diffFields(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): PluginChange[] {
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  const changes: PluginChange[] = [];
  for (const field of names) {
    const has = (m: Record<string, unknown> | null) => m !== null && field in m;
    const b = has(before) ? before![field] : null;
    const a = has(after) ? after![field] : null;
    if (has(before) && has(after)) {
      if (!sameJson(b, a)) changes.push({ field, action: 'changed', before: b, after: a });
    } else if (has(after)) {
      changes.push({ field, action: 'created', before: null, after: a });
    } else {
      changes.push({ field, action: 'deleted', before: b, after: null });
    }
  }
  return changes;
}
