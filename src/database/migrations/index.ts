import { Init1795240522298 } from './1795240522298-Init.js';
import { Domains1795241288204 } from './1795241288204-Domains.js';
import { MembersInvites1795241523230 } from './1795241523230-MembersInvites.js';
import { BatchExports1795242232741 } from './1795242232741-BatchExports.js';
import { ProjectSessionRecordingOptIn1795243816388 } from './1795243816388-ProjectSessionRecordingOptIn.js';
import { PluginRecords1795243845686 } from './1795243845686-PluginRecords.js';
import { SessionRecordings1795243860032 } from './1795243860032-SessionRecordings.js';
import { BatchExportRunIndexes1795244538930 } from './1795244538930-BatchExportRunIndexes.js';
import { PluginTenancy1795467468180 } from './1795467468180-PluginTenancy.js';
import { OrganizationSettings1795467478000 } from './1795467478000-OrganizationSettings.js';
import { SharingSettings1795467478434 } from './1795467478434-SharingSettings.js';
import { PluginConfigNames1795467752796 } from './1795467752796-PluginConfigNames.js';
import { BatchExportFilters1795467963056 } from './1795467963056-BatchExportFilters.js';
import { SessionSnapshotBytes1795469021029 } from './1795469021029-SessionSnapshotBytes.js';
import { BatchExportRuns1795473000000 } from './1795473000000-BatchExportRuns.js';
import { RecordingObjectStorage1795480000000 } from './1795480000000-RecordingObjectStorage.js';
import { RecordingRetention1795490000000 } from './1795490000000-RecordingRetention.js';
import { ExportWatermark1795807561520 } from './1795807561520-ExportWatermark.js';
import { RecordingPackedObjects1795900000000 } from './1795900000000-RecordingPackedObjects.js';

/**
 * Migrations in the order they apply. `npm run migration:generate -- <Name>` writes a new file beside this one;
 * add its class at the end of this list (CI's drift check fails until the entities and this list agree).
 */
export const MIGRATIONS: (new () => unknown)[] = [
  Init1795240522298,
  Domains1795241288204,
  MembersInvites1795241523230,
  BatchExports1795242232741,
  ProjectSessionRecordingOptIn1795243816388,
  PluginRecords1795243845686,
  SessionRecordings1795243860032,
  BatchExportRunIndexes1795244538930,
  PluginTenancy1795467468180,
  OrganizationSettings1795467478000,
  SharingSettings1795467478434,
  PluginConfigNames1795467752796,
  BatchExportFilters1795467963056,
  SessionSnapshotBytes1795469021029,
  BatchExportRuns1795473000000,
  RecordingObjectStorage1795480000000,
  RecordingRetention1795490000000,
  ExportWatermark1795807561520,
  RecordingPackedObjects1795900000000,
];
