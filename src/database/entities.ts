import { BatchExportBackfillEntity } from '../batch-exports/batch-export-backfill.entity.js';
import { BatchExportLogEntity } from '../batch-exports/batch-export-log.entity.js';
import { BatchExportPauseEntity } from '../batch-exports/batch-export-pause.entity.js';
import { BatchExportRunEntity } from '../batch-exports/batch-export-run.entity.js';
import { BatchExportEntity } from '../batch-exports/batch-export.entity.js';
import { DomainEntity } from '../domains/domain.entity.js';
import { InviteEntity } from '../invites/invite.entity.js';
import { MembershipProjectAccessEntity } from '../memberships/membership-project-access.entity.js';
import { OrganizationMembershipEntity } from '../memberships/organization-membership.entity.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { PersonalApiKeyEntity } from '../personal-api-keys/personal-api-key.entity.js';
import { PluginActivityEntity } from '../plugins/plugin-activity.entity.js';
import { PluginConfigEntity } from '../plugins/plugin-config.entity.js';
import { PluginSourceFileEntity } from '../plugins/plugin-source-file.entity.js';
import { PluginEntity } from '../plugins/plugin.entity.js';
import { PersonDistinctIdEntity } from '../persons/person-distinct-id.entity.js';
import { PersonEntity } from '../persons/person.entity.js';
import { ProjectEntity } from '../projects/project.entity.js';
import {
  SessionRecordingPlaylistEntity,
  SessionRecordingPlaylistItemEntity,
} from '../session-recording-playlists/session-recording-playlist.entity.js';
import { SessionRecordingCountEntity } from '../session-recordings/session-recording-count.entity.js';
import { SessionRecordingEventKeyEntity } from '../session-recordings/session-recording-event-key.entity.js';
import { SessionRecordingSharingEntity } from '../session-recordings/session-recording-sharing.entity.js';
import { SessionRecordingSnapshotEntity } from '../session-recordings/session-recording-snapshot.entity.js';
import { SessionRecordingViewEntity } from '../session-recordings/session-recording-view.entity.js';
import { SessionRecordingEntity } from '../session-recordings/session-recording.entity.js';
import { UserEntity } from '../users/user.entity.js';

/**
 * Every entity of the service, listed explicitly (no globs) so the app, the typeorm CLI and the tests load the
 * same set whether they run compiled JavaScript or TypeScript sources. A new module adds its entities here.
 */
export const ENTITIES = [
  UserEntity,
  OrganizationEntity,
  OrganizationMembershipEntity,
  ProjectEntity,
  PersonalApiKeyEntity,
  DomainEntity,
  MembershipProjectAccessEntity,
  InviteEntity,
  BatchExportEntity,
  BatchExportBackfillEntity,
  BatchExportRunEntity,
  BatchExportPauseEntity,
  BatchExportLogEntity,
  PluginEntity,
  PluginSourceFileEntity,
  PluginActivityEntity,
  PluginConfigEntity,
  PersonEntity,
  PersonDistinctIdEntity,
  SessionRecordingEntity,
  SessionRecordingCountEntity,
  SessionRecordingEventKeyEntity,
  SessionRecordingSnapshotEntity,
  SessionRecordingViewEntity,
  SessionRecordingSharingEntity,
  SessionRecordingPlaylistEntity,
  SessionRecordingPlaylistItemEntity,
];
