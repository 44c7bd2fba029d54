import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { PersonsRepository } from './persons.repository.js';

export interface PersonPropertyUpdate {
  set: Record<string, unknown>;
  setOnce: Record<string, unknown>;
}

/**
 * Persons of a project (decisions §10): found by any of their distinct ids, created on the first event of an
 * unknown one. Every method takes the caller's transaction manager, so capture resolves persons, updates
 * recordings and stores snapshots in one transaction.
 */
@Injectable()
export class PersonsService {
  constructor(private readonly persons: PersonsRepository) {}

  /**
   * The person id of each distinct id, creating the missing persons. Distinct ids are handled in sorted order,
   * so concurrent transactions wait for each other's new distinct ids in one order (no deadlock).
   */
  async resolveDistinctIds(
    manager: EntityManager,
    teamId: number,
    distinctIds: Iterable<string>,
    now: Date,
  ): Promise<Map<string, number>> {
    const sorted = [...new Set(distinctIds)].sort();
    const found = await this.persons.personIdsByDistinctId(manager, teamId, sorted);
    for (const distinctId of sorted) {
      if (!found.has(distinctId)) {
        found.set(distinctId, await this.persons.createForDistinctId(manager, teamId, distinctId, now));
      }
    }
    return found;
  }

  /** Applies `$set`/`$set_once` updates, one statement per person, in person id order. */
  async applyPropertyUpdates(
    manager: EntityManager,
    updates: Map<number, PersonPropertyUpdate>,
  ): Promise<void> {
    for (const personId of [...updates.keys()].sort((a, b) => a - b)) {
      const { set, setOnce } = updates.get(personId) as PersonPropertyUpdate;
      if (Object.keys(set).length || Object.keys(setOnce).length) {
        await this.persons.mergeProperties(manager, personId, set, setOnce);
      }
    }
  }

  /** Shallow-merges `properties` into the person's (PATCH of a recording's `person`). */
  mergeProperties(
    manager: EntityManager,
    personId: number,
    properties: Record<string, unknown>,
  ): Promise<void> {
    return this.persons.mergeProperties(manager, personId, properties);
  }
}
