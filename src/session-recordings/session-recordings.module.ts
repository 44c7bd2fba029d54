import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { PersonsModule } from '../persons/persons.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { RecordingAccessRulesModule } from '../recording-access-rules/recording-access-rules.module.js';
import { RecordingIngestionService } from './ingestion/recording-ingestion.service.js';
import { RecordingsSink } from './ingestion/recordings.sink.js';
import { RecordingRetentionService } from './retention/recording-retention.service.js';
import {
  SessionRecordingsController,
  SharedRecordingsController,
} from './reads/session-recordings.controller.js';
import { SessionRecordingsRepository } from './session-recordings.repository.js';
import { RecordingIngestionRepository } from './ingestion/recording-ingestion.repository.js';
import { RecordingRetentionRepository } from './retention/recording-retention.repository.js';
import { ProjectRecordingsRepository } from './retention/project-recordings.repository.js';
import { RecordingProjectCleanup } from './retention/recording-project-cleanup.js';
import { RecordingSharingRepository } from './sharing/recording-sharing.repository.js';
import { SessionRecordingsService } from './reads/session-recordings.service.js';
import { SnapshotReader } from './reads/snapshot-reader.js';
import { S3SnapshotObjectStore } from './storage/s3-snapshot-object-store.js';
import { SnapshotObjectStore } from './storage/snapshot-object-store.js';
import { SnapshotPacker } from './storage/snapshot-packer.js';
import { RecordingKeys } from './storage/recording-keys.js';
import { SnapshotStorage } from './storage/snapshot-storage.js';
import { SnapshotStorageMaintenance } from './storage/snapshot-storage-maintenance.js';
import { SnapshotStorageRepository } from './storage/snapshot-storage.repository.js';

/**
 * Session recordings of a project: ingestion (used by capture), the recordings API and sharing, and the purge
 * of expired recordings (its timer: RecordingPurgeModule).
 */
@Module({
  imports: [OrganizationsModule, PersonsModule, ProjectsModule, RecordingAccessRulesModule],
  controllers: [SessionRecordingsController, SharedRecordingsController],
  providers: [
    SessionRecordingsRepository,
    RecordingIngestionRepository,
    RecordingSharingRepository,
    RecordingRetentionRepository,
    RecordingIngestionService,
    // The sink of `$snapshot` events the manifest declares (`sinks`), found by the ingest pipeline.
    RecordingsSink,
    SessionRecordingsService,
    RecordingRetentionService,
    SnapshotReader,
    { provide: SnapshotObjectStore, useClass: S3SnapshotObjectStore },
    SnapshotStorage,
    SnapshotStorageRepository,
    SnapshotStorageMaintenance,
    SnapshotPacker,
    RecordingKeys,
    // Removes a deleted project's recordings (registered with the projects' ProjectDeletionService).
    ProjectRecordingsRepository,
    RecordingProjectCleanup,
  ],
  exports: [
    RecordingIngestionService,
    SessionRecordingsService,
    RecordingRetentionService,
    SnapshotStorageMaintenance,
    SnapshotPacker,
  ],
})
export class SessionRecordingsModule {}
