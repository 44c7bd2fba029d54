import { Module } from '@nestjs/common';
import { PersonsRepository } from './persons.repository.js';
import { PersonsService } from './persons.service.js';

/** Persons of a project and their distinct ids; used by recording capture and the recordings API. */
@Module({
  providers: [PersonsRepository, PersonsService],
  exports: [PersonsService],
})
export class PersonsModule {}
