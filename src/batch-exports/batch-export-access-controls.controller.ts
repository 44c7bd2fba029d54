import { Controller } from '@nestjs/common';
import { ApiNotFoundResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AccessControlObject } from '../access-controls/access-controls.service.js';
import { AccessControlsService } from '../access-controls/access-controls.service.js';
import {
  ObjectAccessControlsRoutes,
  type ObjectAccessControlsSpec,
} from '../access-controls/object-access-controls.routes.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { IntIdPipe, UuidPipe } from '../common/validation/id.pipe.js';
import type { BatchExportScope } from './batch-export-scope.js';
import { BatchExportsService } from './batch-exports.service.js';

const uuid = new UuidPipe();
const intId = new IntIdPipe();

type ExportPath = { scope: BatchExportScope; id: string };

const ID_PARAM = ApiParam({
  name: 'id',
  type: 'string',
  format: 'uuid',
  description: 'The id of the batch export.',
});

const SPEC: Omit<ObjectAccessControlsSpec<ExportPath>, 'parse' | 'document'> = {
  noun: 'batch export',
  short: 'export',
  resource: 'batch_export',
  writers: 'Admins of its project, the export’s creator and its managers',
};

/**
 * A batch export's access controls (PostHog's AccessControlViewSetMixin on its batch exports), on the
 * organization path of the export.
 */
@Controller('api/organizations/:organization_id/batch_exports/:id')
export class BatchExportAccessControlsController extends ObjectAccessControlsRoutes<ExportPath>({
  ...SPEC,
  document: [
    ApiTags('batch exports'),
    ApiParam({ name: 'organization_id', format: 'uuid' }),
    ID_PARAM,
    ApiNotFoundResponse({
      description: 'No such organization or batch export visible to the caller (deleted exports included).',
      type: ErrorBodyDto,
    }),
  ],
  parse: (params) => ({
    scope: { organizationId: uuid.transform(params.organization_id) },
    id: uuid.transform(params.id),
  }),
}) {
  constructor(
    controls: AccessControlsService,
    private readonly batchExports: BatchExportsService,
  ) {
    super(controls);
  }

  protected find(principal: Principal, { scope, id }: ExportPath): Promise<AccessControlObject> {
    return this.batchExports.accessControlObject(principal, scope, id);
  }
}

/** The same, on the export's project path (PostHog's), and through the route alias its environment path. */
@Controller('api/projects/:project_id/batch_exports/:id')
export class ProjectBatchExportAccessControlsController extends ObjectAccessControlsRoutes<ExportPath>({
  ...SPEC,
  document: [
    ApiTags('batch exports'),
    ApiParam({ name: 'project_id', type: 'integer', description: 'The id of the project.' }),
    ID_PARAM,
    ApiNotFoundResponse({
      description:
        'No such project visible to the caller, or no such batch export visible to the caller in it (deleted ' +
        'exports included).',
      type: ErrorBodyDto,
    }),
  ],
  parse: (params) => ({
    scope: { projectId: intId.transform(params.project_id) },
    id: uuid.transform(params.id),
  }),
}) {
  constructor(
    controls: AccessControlsService,
    private readonly batchExports: BatchExportsService,
  ) {
    super(controls);
  }

  protected find(principal: Principal, { scope, id }: ExportPath): Promise<AccessControlObject> {
    return this.batchExports.accessControlObject(principal, scope, id);
  }
}
