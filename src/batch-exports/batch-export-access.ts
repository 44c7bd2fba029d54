import { ApiError } from '../common/errors/api-error.js';
import type { ProjectAccess } from '../memberships/memberships.service.js';
import type { BatchExportEntity } from './batch-export.entity.js';
import type { VisibleExports } from './batch-exports.repository.js';

/** The kind of object of an export's access rules, and the resource it follows (PostHog's `batch_export`). */
export const BATCH_EXPORT = 'batch_export';

/**
 * The caller's access to the export's project, after checking that they may see the export (404 otherwise: its
 * project or the export at `none` for them) and that their level on it reaches `need` (403 otherwise).
 */
export function requireExport(
  projects: { project(id: number): ProjectAccess | undefined },
  entity: BatchExportEntity,
  need: 'viewer' | 'editor',
): ProjectAccess {
  const project = projects.project(entity.teamId);
  if (!project?.visible) throw ApiError.notFound();
  project.requireObject(BATCH_EXPORT, entity.id, entity.createdById, need);
  return project;
}

/**
 * Which exports of the organization the caller's lists show, by project: null when no rule hides any (an
 * organization admin or owner); else the projects the caller may see, each with the exports the rules leave.
 * With `complete` false (`projects` holds only the first projects of the organization), the exports of the
 * others are hidden from a member.
 */
export function visibleExports(
  userId: number,
  projects: Map<number, ProjectAccess>,
  complete = true,
): VisibleExports | null {
  const teams: VisibleExports['teams'] = [];
  let hidesAny = !complete;
  for (const [team, access] of projects) {
    if (access.isOrganizationAdmin) return null;
    if (!access.visible) {
      hidesAny = true;
      continue;
    }
    const filter = access.objectListFilter(BATCH_EXPORT);
    if (filter) hidesAny = true;
    teams.push({ team, only_ids: filter?.only ?? null, except_ids: filter?.except ?? [] });
  }
  return hidesAny ? { creatorId: userId, teams } : null;
}
