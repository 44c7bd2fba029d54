import type { ProjectAccess } from '../memberships/memberships.service.js';

/**
 * Where a request finds batch exports: an organization (`/api/organizations/:organization_id/batch_exports/…`,
 * every project of it the caller may see) or one of its projects (`/api/projects/:project_id/batch_exports/…`, and
 * `/api/environments/:environment_id/…`, PostHog's paths: that project only). The same service serves both.
 */
export type BatchExportScope =
  { organizationId: string; projectId?: undefined } | { projectId: number; organizationId?: undefined };

/** The caller's access in the scope of a request (`BatchExportsService.enter`). */
export interface ScopeAccess {
  organizationId: string;
  /** The project of a project path; null on the organization path. */
  teamId: number | null;
  projects: Map<number, ProjectAccess>;
  /** Whether `projects` holds every project of the organization (else a member's lists hide the others). */
  complete: boolean;
  project(id: number): ProjectAccess | undefined;
}
