import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { PersonReadsService } from './person-reads.service.js';
import { PersonsController } from './persons.controller.js';
import { PersonsProjectCleanup } from './persons-project-cleanup.js';
import { PersonsRepository } from './persons.repository.js';
import { PERSONS_STORE } from './persons-store.js';
import { PersonsService } from './persons.service.js';
import { PersonUpdatesService } from './person-updates.service.js';

/**
 * Persons of a project and their distinct ids: used by recording and event capture and the recordings and
 * events APIs, and read through the persons API.
 */
@Module({
  imports: [ProjectsModule],
  controllers: [PersonsController],
  providers: [
    PersonsRepository,
    { provide: PERSONS_STORE, useExisting: PersonsRepository },
    PersonsService,
    PersonUpdatesService,
    PersonReadsService,
    PersonsProjectCleanup,
  ],
  exports: [PersonsService, PersonUpdatesService],
})
export class PersonsModule {}
