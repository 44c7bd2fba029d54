/**
 * Plugins that have an equivalent on the newer function runtime ("hog functions"), by url: a record with one
 * of these urls could be moved to it. This is what a record's `hog_function_migration_available` reports —
 * `"true"` when its url is listed here, `"false"` otherwise (also for records without url, such as `source`
 * ones). The list is part of the service, like the runtime's templates; it does not depend on the catalog.
 */
export const HOG_FUNCTION_MIGRATABLE_URLS: ReadonlySet<string> = new Set([
  'https://github.com/PostHog/customerio-plugin',
  'https://github.com/PostHog/hubspot-plugin',
  'https://github.com/PostHog/posthog-intercom-plugin',
  'https://github.com/PostHog/posthog-loops-plugin',
  'https://github.com/PostHog/posthog-engage-so-plugin',
  'https://github.com/PostHog/sendgrid-plugin',
  'https://github.com/PostHog/posthog-avo-plugin',
  'https://github.com/PostHog/rudderstack-posthog-plugin',
  'https://github.com/PostHog/posthog-plugin-geoip',
  'https://github.com/PostHog/semver-flattener-plugin',
  'https://github.com/PostHog/user-agent-plugin',
]);

/** `hog_function_migration_available` of a record with this url (a string, as the interface types it). */
export function hogFunctionMigrationAvailable(url: string | null): 'true' | 'false' {
  return url !== null && HOG_FUNCTION_MIGRATABLE_URLS.has(url) ? 'true' : 'false';
}
