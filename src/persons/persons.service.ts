import { Injectable } from '@nestjs/common';
import { PersonsRepository } from './persons.repository.js';

export interface PersonPropertyUpdate {
  set: Record<string, unknown>;
  setOnce: Record<string, unknown>;
}

/**
 * Persons of a project (docs/decisions.md §10): found by any of their distinct ids, created on the first event of an
 * unknown one. Capture calls these inside its transaction, so persons, recordings and snapshots of a request
 * commit together.
 */
@Injectable()
export class PersonsService {
  constructor(private readonly persons: PersonsRepository) {}

  /**
   * The person id of each distinct id, creating the missing persons. Distinct ids are handled in sorted order,
   * so concurrent transactions wait for each other's new distinct ids in one order (no deadlock). Runs inside
   * the caller's transaction.
   */
  async resolveDistinctIds(
    teamId: number,
    distinctIds: Iterable<string>,
    now: Date,
  ): Promise<Map<string, number>> {
    const sorted = [...new Set(distinctIds)].sort();
    const found = await this.persons.personIdsByDistinctId(teamId, sorted);
    for (const distinctId of sorted) {
      if (!found.has(distinctId)) {
        found.set(distinctId, await this.persons.createForDistinctId(teamId, distinctId, now));
      }
    }
    return found;
  }

  /**
   * Puts two distinct ids on one person (`$identify`, `$create_alias`), PostHog's way: neither known — one new
   * person with both; one known — the other joins its person; on two persons — the newer one is merged into the
   * older one (`beforeMerge` is called first, inside the caller's transaction, to re-point what refers to it).
   * Returns the person of both.
   */
  async link(
    teamId: number,
    distinctId: string,
    otherId: string,
    now: Date,
    beforeMerge: (fromId: number, intoId: number) => Promise<void>,
  ): Promise<number> {
    const found = await this.persons.personIdsByDistinctId(teamId, [distinctId, otherId].sort());
    const a = found.get(distinctId);
    const b = found.get(otherId);
    if (a === undefined && b === undefined) {
      const id = await this.persons.createForDistinctId(teamId, distinctId, now);
      return this.persons.addDistinctId(teamId, otherId, id);
    }
    if (a === undefined) return this.persons.addDistinctId(teamId, distinctId, b as number);
    if (b === undefined) return this.persons.addDistinctId(teamId, otherId, a);
    if (a === b) return a;
    const [into, from] = a < b ? [a, b] : [b, a];
    await beforeMerge(from, into);
    await this.persons.mergeInto(from, into);
    return into;
  }

  /** Removes properties of persons (`$unset`), in person id order. */
  async unsetProperties(unsets: Map<number, Set<string>>): Promise<void> {
    for (const personId of [...unsets.keys()].sort((x, y) => x - y)) {
      await this.persons.unsetProperties(personId, [...(unsets.get(personId) as Set<string>)]);
    }
  }

  /** Applies `$set`/`$set_once` updates, one statement per person, in person id order. */
  async applyPropertyUpdates(updates: Map<number, PersonPropertyUpdate>): Promise<void> {
    for (const personId of [...updates.keys()].sort((a, b) => a - b)) {
      const { set, setOnce } = updates.get(personId) as PersonPropertyUpdate;
      if (Object.keys(set).length || Object.keys(setOnce).length) {
        await this.persons.mergeProperties(personId, set, setOnce);
      }
    }
  }

  /** The distinct ids of a project's person, by its id or uuid (empty when there is none). */
  distinctIdsOfPerson(teamId: number, idOrUuid: string): Promise<string[]> {
    return this.persons.distinctIdsOfPerson(teamId, idOrUuid);
  }

  /** The uuid of each of these persons (the `person_id` analytics events carry). */
  personUuids(ids: Iterable<number>): Promise<Map<number, string>> {
    return this.persons.uuidsByIds([...new Set(ids)]);
  }

  /** Shallow-merges `properties` into the person's (PATCH of a recording's `person`). */
  mergeProperties(personId: number, properties: Record<string, unknown>): Promise<void> {
    return this.persons.mergeProperties(personId, properties);
  }
}
