import { Controller } from '@nestjs/common';
import { ApiNotFoundResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AccessControlObject } from '../access-controls/access-controls.service.js';
import { AccessControlsService } from '../access-controls/access-controls.service.js';
import { ObjectAccessControlsRoutes } from '../access-controls/object-access-controls.routes.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { IntIdPipe } from '../common/validation/id.pipe.js';
import { SessionRecordingPlaylistsService } from './session-recording-playlists.service.js';

const intId = new IntIdPipe();

/** A playlist's access controls (PostHog's AccessControlViewSetMixin on its playlists). */
@Controller('api/projects/:project_id/session_recording_playlists/:short_id')
export class PlaylistAccessControlsController extends ObjectAccessControlsRoutes({
  noun: 'playlist',
  short: 'playlist',
  resource: 'session_recording',
  writers: 'Project admins, the playlist’s creator and its managers',
  document: [
    ApiTags('session recording playlists'),
    ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' }),
    ApiParam({ name: 'short_id', type: 'string', description: 'The `short_id` of the playlist.' }),
    ApiNotFoundResponse({
      description: 'No such project or playlist visible to the caller (deleted ones included).',
      type: ErrorBodyDto,
    }),
  ],
  parse: (params) => ({ projectId: intId.transform(params.project_id), shortId: params.short_id }),
}) {
  constructor(
    controls: AccessControlsService,
    private readonly playlists: SessionRecordingPlaylistsService,
  ) {
    super(controls);
  }

  protected find(
    principal: Principal,
    { projectId, shortId }: { projectId: number; shortId: string },
  ): Promise<AccessControlObject> {
    return this.playlists.accessControlObject(principal, projectId, shortId);
  }
}
