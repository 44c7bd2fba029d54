/**
 * Where a request finds batch exports: an organization (`/api/organizations/:organization_id/batch_exports/…`,
 * every project of it the caller may see) or one of its projects (`/api/projects/:project_id/batch_exports/…`, and
 * `/api/environments/:environment_id/…`, PostHog's paths: that project only). The same service serves both.
 */
export type BatchExportScope =
  { organizationId: string; projectId?: undefined } | { projectId: number; organizationId?: undefined };
