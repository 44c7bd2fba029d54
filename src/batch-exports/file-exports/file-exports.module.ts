import { Module } from '@nestjs/common';
import { ProjectsModule } from '../../projects/projects.module.js';
import { RecordingAccessRulesModule } from '../../recording-access-rules/recording-access-rules.module.js';
import { ExportSourceRepository } from '../runs/export-source.repository.js';
import { FileExportQueue } from './file-export-queue.js';
import { FileExportStore } from './file-export-store.js';
import { FileExportWorker } from './file-export-worker.js';
import { FileExportsController } from './file-exports.controller.js';
import { FileExportsExpiry } from './file-exports.expiry.js';
import { FileExportsRepository } from './file-exports.repository.js';
import { FileExportsService } from './file-exports.service.js';

/**
 * On-demand file exports (part of the batch-exports feature): the exports API on the project path, the job queue
 * and worker that write the files, and the expiry task.
 */
@Module({
  imports: [ProjectsModule, RecordingAccessRulesModule],
  controllers: [FileExportsController],
  providers: [
    FileExportsRepository,
    FileExportsService,
    FileExportStore,
    FileExportQueue,
    FileExportWorker,
    FileExportsExpiry,
    ExportSourceRepository,
  ],
})
export class FileExportsModule {}
