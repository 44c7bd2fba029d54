/**
 * The four categories of pipeline plugin records (docs/decisions.md §9) and how a record's `capabilities` put it in
 * exactly one of them. Pure functions, unit-tested beside this file.
 */

export const PLUGIN_CATEGORIES = ['transformations', 'destinations', 'import_apps', 'frontend_apps'] as const;
export type PluginCategory = (typeof PLUGIN_CATEGORIES)[number];

/** The URL path segment of each category (`/api/organizations/:organization_id/<segment>`). */
export const CATEGORY_SEGMENTS: Record<PluginCategory, string> = {
  destinations: 'pipeline_destinations',
  frontend_apps: 'pipeline_frontend_apps',
  import_apps: 'pipeline_import_apps',
  transformations: 'pipeline_transformations',
};

/** Singular and plural nouns of each category, for Swagger summaries and error sentences. */
export const CATEGORY_NOUNS: Record<PluginCategory, { one: string; many: string }> = {
  destinations: { one: 'destination', many: 'destinations' },
  frontend_apps: { one: 'frontend app', many: 'frontend apps' },
  import_apps: { one: 'import app', many: 'import apps' },
  transformations: { one: 'transformation', many: 'transformations' },
};

/** The shape of `capabilities` (validated by `capabilitiesViolation`). */
export interface Capabilities {
  methods?: string[];
  scheduled_tasks?: string[];
  jobs?: string[];
}

/** Methods that make a record a transformation; checked first. */
export const TRANSFORMATION_METHODS = ['processEvent'];
/** Methods that make a record a destination; checked second. */
export const DESTINATION_METHODS = ['onEvent', 'composeWebhook'];

/**
 * The category of a record with these capabilities, first rule that matches:
 *
 * 1. `methods` contains `processEvent` → transformations;
 * 2. `methods` contains `onEvent` or `composeWebhook` → destinations;
 * 3. `scheduled_tasks` is non-empty, or `methods` holds any other method → import apps (everything that runs on
 *    its own rather than per event or in the browser);
 * 4. otherwise — no methods and no scheduled tasks (`{}`, or only `jobs`) → frontend apps.
 */
export function categoryOf(capabilities: Capabilities): PluginCategory {
  const methods = capabilities.methods ?? [];
  if (methods.some((m) => TRANSFORMATION_METHODS.includes(m))) return 'transformations';
  if (methods.some((m) => DESTINATION_METHODS.includes(m))) return 'destinations';
  if ((capabilities.scheduled_tasks ?? []).length > 0 || methods.length > 0) return 'import_apps';
  return 'frontend_apps';
}

/** The capabilities given to a record created through a category's path without `capabilities`. */
export function defaultCapabilities(category: PluginCategory): Capabilities {
  switch (category) {
    case 'transformations':
      return { methods: ['processEvent'] };
    case 'destinations':
      return { methods: ['onEvent'] };
    case 'import_apps':
      return { scheduled_tasks: ['runEveryMinute'] };
    case 'frontend_apps':
      return {};
  }
}
