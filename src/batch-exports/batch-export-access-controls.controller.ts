import { Controller } from '@nestjs/common';
import { ApiNotFoundResponse, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AccessControlObject } from '../access-controls/access-controls.service.js';
import { AccessControlsService } from '../access-controls/access-controls.service.js';
import { ObjectAccessControlsRoutes } from '../access-controls/object-access-controls.routes.js';
import type { Principal } from '../common/auth/principal.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { UuidPipe } from '../common/validation/id.pipe.js';
import { BatchExportsService } from './batch-exports.service.js';

const uuid = new UuidPipe();

/**
 * A batch export's access controls (PostHog's AccessControlViewSetMixin on its batch exports). PostHog serves them
 * under the export's project path; exports live under their organization here (no project path yet), so do these.
 */
@Controller('api/organizations/:organization_id/batch_exports/:id')
export class BatchExportAccessControlsController extends ObjectAccessControlsRoutes({
  noun: 'batch export',
  short: 'export',
  resource: 'batch_export',
  writers: 'Admins of its project, the export’s creator and its managers',
  document: [
    ApiTags('batch exports'),
    ApiParam({ name: 'organization_id', format: 'uuid' }),
    ApiParam({ name: 'id', type: 'string', format: 'uuid', description: 'The id of the batch export.' }),
    ApiNotFoundResponse({
      description: 'No such organization or batch export visible to the caller (deleted exports included).',
      type: ErrorBodyDto,
    }),
  ],
  parse: (params) => ({
    organizationId: uuid.transform(params.organization_id),
    id: uuid.transform(params.id),
  }),
}) {
  constructor(
    controls: AccessControlsService,
    private readonly batchExports: BatchExportsService,
  ) {
    super(controls);
  }

  protected find(
    principal: Principal,
    { organizationId, id }: { organizationId: string; id: string },
  ): Promise<AccessControlObject> {
    return this.batchExports.accessControlObject(principal, organizationId, id);
  }
}
