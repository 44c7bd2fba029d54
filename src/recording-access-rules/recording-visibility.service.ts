import { Injectable } from '@nestjs/common';
import type { Principal } from '../common/auth/principal.js';
import type { AccessControlResource } from '../common/vocabulary/access-levels.js';
import type { ProjectAccess } from '../memberships/memberships.service.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { type AccessJoin, ProjectsService } from '../projects/projects.service.js';
import {
  hidingRulesJsonSql,
  hidingRulesOf,
  RecordingAccessRulesRepository,
} from './recording-access-rules.repository.js';
import { type HidingRule, RecordingVisibility } from './recording-visibility.js';

export {
  EXAMPLE_VISIBILITY,
  globToLike,
  type HidingRule,
  MATCHED_URL_MAX_LENGTH,
  RecordingVisibility,
} from './recording-visibility.js';

/** The caller's hiding rules, read in the statement of project access. */
const HIDING_RULES: AccessJoin = { sql: hidingRulesJsonSql };

/** A project entered by a read of recordings: the project, what the caller may do in it and may watch of it. */
export interface RecordingsEntry {
  project: ProjectEntity;
  access: ProjectAccess;
  visibility: RecordingVisibility;
}

function visibilityOf(hiding: HidingRule[]): RecordingVisibility {
  return hiding.length ? new RecordingVisibility(hiding) : RecordingVisibility.EVERYTHING;
}

/**
 * Which recordings a user may watch, asked by every read of recordings (the recordings API, the events of a
 * session, playlists, shared links, the sessions batch export), read on every request, so a rule changed or a
 * role membership removed takes effect on the next request, on every replica. A request with a caller reads it
 * in the statement of project access (`enter`); reads without one (a shared link, an export run) ask
 * `visibilityFor`, one indexed query.
 */
@Injectable()
export class RecordingVisibilityService {
  constructor(
    private readonly rules: RecordingAccessRulesRepository,
    private readonly projects: ProjectsService,
  ) {}

  /**
   * The project of a request that reads recordings or the sessions' data (`resource`: `session_recording`, or
   * `query` for the events), checked as `ProjectsService.requireResource` (404, 403), with what the caller may
   * watch of its recordings: one statement for all of it.
   */
  async enter(
    principal: Principal,
    projectId: number,
    resource: AccessControlResource,
    need: 'viewer' | 'editor',
  ): Promise<RecordingsEntry> {
    const { project, access, joined } = await this.projects.requireResource(
      principal,
      projectId,
      resource,
      need,
      HIDING_RULES,
    );
    return { project, access, visibility: visibilityOf(hidingRulesOf(joined)) };
  }

  /**
   * What user `userId` may watch of project `teamId`'s recordings: everything for the organization's admins
   * and owners, else everything but what the project's rules naming none of the user's roles match. `null`
   * stands for no user (a link whose issuer is gone): every rule hides what it matches.
   */
  async visibilityFor(teamId: number, userId: number | null): Promise<RecordingVisibility> {
    return visibilityOf(await this.rules.hidingRules(teamId, userId));
  }

  /**
   * Whether `visibility` (what a user may watch) hides the project's recording `sessionId` (deleted and expired
   * ones too): what they may not watch, they may not touch through other resources either (a playlist's pins).
   */
  async hidesSession(teamId: number, visibility: RecordingVisibility, sessionId: string): Promise<boolean> {
    return visibility.restricted && this.rules.hidesSession(teamId, sessionId, visibility);
  }
}
