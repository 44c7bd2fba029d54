import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error.js';
import { AppConfig } from '../config/config.js';
import {
  boundedUpdate,
  updateChanges,
  type PersonPropertyUpdate,
  type PersonSetLimits,
  PROTECTED_PERSON_PROPERTIES,
  setLimitProblem,
} from './person-properties.js';
import type { EventPerson } from './persons.repository.js';
import { PERSONS_STORE, type PersonsStore } from './persons-store.js';

export type { EventPerson, PersonPropertyUpdate };

/** The person properties an event of the events API shows (PostHog's). */
export const EVENT_PERSON_PROPERTIES = ['email', 'name', 'username'];
/** Most bytes (JSON text) of one of them; a larger value is left out of the event's `person`. */
export const EVENT_PERSON_VALUE_BYTES = 1000;

/** What `applyPropertyUpdates` left out, for the caller's log line and answer. */
export interface PropertyUpdateOutcome {
  /** Persons updated. */
  applied: number;
  /** Updates not applied: they would have taken the person past PERSON_PROPERTIES_MAX_BYTES. */
  refused: number;
  /** Properties removed from persons that were already past it. */
  trimmedKeys: number;
}

/**
 * Persons of a project (docs/decisions.md §10): found by any of their distinct ids, created on the first event of an
 * unknown one. Capture calls these inside its transaction, so persons, recordings and snapshots of a request
 * commit together. Every write of person properties goes through `applyPropertyUpdates`, which keeps them within
 * the limits of `person-properties.ts` (docs/decisions.md §10).
 */
@Injectable()
export class PersonsService {
  private readonly logger = new Logger(PersonsService.name);
  readonly setLimits: PersonSetLimits;
  private readonly maxBytes: number;

  constructor(
    @Inject(PERSONS_STORE) private readonly persons: PersonsStore,
    config: AppConfig,
  ) {
    this.setLimits = {
      maxKeys: config.get('PERSON_SET_MAX_KEYS'),
      maxBytes: config.get('PERSON_SET_MAX_BYTES'),
    };
    this.maxBytes = config.get('PERSON_PROPERTIES_MAX_BYTES');
  }

  /**
   * The person id of each distinct id, creating the missing persons (one statement: `resolvePersons`). Runs
   * inside the caller's transaction.
   */
  async resolveDistinctIds(
    teamId: number,
    distinctIds: Iterable<string>,
    now: Date,
  ): Promise<Map<string, number>> {
    const persons = await this.resolvePersons(teamId, distinctIds, now);
    return new Map([...persons].map(([distinctId, person]) => [distinctId, person.id]));
  }

  /**
   * The person (id and uuid) of each distinct id, creating the missing persons, in one statement per batch.
   * Distinct ids are handled in sorted order, so concurrent transactions wait for each other's new distinct ids
   * in one order (no deadlock). Runs inside the caller's transaction.
   */
  resolvePersons(
    teamId: number,
    distinctIds: Iterable<string>,
    now: Date,
  ): Promise<Map<string, { id: number; uuid: string }>> {
    return this.persons.resolveDistinctIds(teamId, [...new Set(distinctIds)].sort(), now);
  }

  /**
   * The person (id and uuid) of each of these distinct ids that has one, without creating or locking any: what
   * an event that does not process persons (`$process_person_profile: false`) is attached to.
   */
  existingPersons(
    teamId: number,
    distinctIds: Iterable<string>,
  ): Promise<Map<string, { id: number; uuid: string }>> {
    const ids = [...new Set(distinctIds)];
    return ids.length ? this.persons.personsByDistinctId(teamId, ids) : Promise.resolve(new Map());
  }

  /** Why one request may not set these properties on a person (PERSON_SET_MAX_KEYS / _BYTES), or null. */
  setProblem(properties: Record<string, unknown>): string | null {
    return setLimitProblem(properties, this.setLimits);
  }

  /**
   * Applies `$set`/`$set_once`/`$unset` updates within PERSON_PROPERTIES_MAX_BYTES (and marks the persons of updates with
   * `identify` identified), one person at a time in person id
   * order (each locked until the caller's transaction ends, so concurrent updates never lose one another's
   * keys). An update that would take a person past the limit is left out; a person already past it is trimmed
   * (`boundedUpdate`). Both are counted in the outcome and logged; nothing here fails a request. The updates
   * must already be within PERSON_SET_MAX_KEYS / _BYTES (`setProblem`). Runs inside the caller's transaction.
   * `beforeEach` is called before each person (a request's deadline check: what it throws ends the work).
   */
  async applyPropertyUpdates(
    updates: Map<number, PersonPropertyUpdate>,
    teamId: number,
    beforeEach: () => void = () => undefined,
  ): Promise<PropertyUpdateOutcome> {
    const outcome: PropertyUpdateOutcome = { applied: 0, refused: 0, trimmedKeys: 0 };
    for (const personId of [...updates.keys()].sort((a, b) => a - b)) {
      beforeEach();
      const update = updates.get(personId) as PersonPropertyUpdate;
      if (update.identify) await this.persons.markIdentified(teamId, personId);
      if (!Object.keys(update.set).length && !Object.keys(update.setOnce).length && !update.unset?.length)
        continue;
      // PostgreSQL's rendering of the JSON adds a space after each `:` and `,`: a person within the limit
      // always loads; a larger one (stored before the limit) keeps only its small protected properties.
      const locked = await this.persons.lockProperties(teamId, personId, 2 * this.maxBytes);
      if (!locked) continue;
      let existing = locked.properties;
      let legacyTrimmed = false;
      if (existing === null) {
        existing = await this.persons.someProperties(
          teamId,
          personId,
          [...PROTECTED_PERSON_PROPERTIES],
          4096,
        );
        legacyTrimmed = true;
      }
      const result = boundedUpdate(existing, update, this.maxBytes);
      const trimmed = result.trimmed.length || legacyTrimmed;
      // An update that changes nothing (only `$unset` of absent keys, `$set_once` of present ones) writes nothing.
      if ((result.applied && updateChanges(existing, update)) || trimmed)
        await this.persons.replaceProperties(teamId, personId, result.properties);
      if (result.applied) outcome.applied++;
      else outcome.refused++;
      outcome.trimmedKeys += result.trimmed.length;
      if (trimmed) {
        this.logger.warn(
          {
            teamId,
            personId,
            storedBytes: locked.renderedBytes,
            removedKeys: legacyTrimmed ? 'all but the protected ones' : result.trimmed.slice(0, 20),
            removedCount: legacyTrimmed ? null : result.trimmed.length,
            bytes: result.bytes,
            maxBytes: this.maxBytes,
          },
          `person ${personId} was past PERSON_PROPERTIES_MAX_BYTES (${this.maxBytes}): its properties were trimmed to ${result.bytes} bytes`,
        );
      }
      if (!result.applied) {
        this.logger.warn(
          { teamId, personId, bytes: result.bytes, maxBytes: this.maxBytes },
          `person ${personId}: an update of its properties was not applied, it would have passed PERSON_PROPERTIES_MAX_BYTES (${this.maxBytes})`,
        );
      }
    }
    return outcome;
  }

  /**
   * Shallow-merges `properties` into the person's (PATCH of a recording's `person`): 400 when they are past
   * PERSON_SET_MAX_KEYS / _BYTES, or would take the person past PERSON_PROPERTIES_MAX_BYTES. Runs inside the
   * caller's transaction, which the 400 rolls back.
   */
  async mergeProperties(
    teamId: number,
    personId: number,
    properties: Record<string, unknown>,
    attr: string,
  ): Promise<void> {
    const problem = this.setProblem(properties);
    if (problem) {
      throw ApiError.validation(`These properties have ${problem}: set fewer at a time.`, attr, 'max_length');
    }
    const outcome = await this.applyPropertyUpdates(
      new Map([[personId, { set: properties, setOnce: {} }]]),
      teamId,
    );
    if (outcome.refused) {
      throw ApiError.validation(
        `These properties would make the person's properties larger than ${this.maxBytes} bytes (PERSON_PROPERTIES_MAX_BYTES): remove some first.`,
        attr,
        'max_length',
      );
    }
  }

  /**
   * Puts two distinct ids on one person (`$identify`, `$create_alias`), PostHog's way: neither known — one new
   * person with both; one known — the other joins its person; on two persons — the newer one is merged into the
   * older one (`beforeMerge` is called first, inside the caller's transaction, to re-point what refers to it).
   * Returns the person of both, which the caller marks identified (`identify` of its update in
   * `applyPropertyUpdates`, so the row is locked in person id order with the others).
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
    await this.persons.mergeInto(teamId, from, into);
    return into;
  }

  /** The distinct ids of a project's person, by its id or uuid (empty when there is none). */
  distinctIdsOfPerson(teamId: number, idOrUuid: string): Promise<string[]> {
    return this.persons.distinctIdsOfPerson(teamId, idOrUuid);
  }

  /**
   * The person of each of these distinct ids (those that have one), as an event of the events API embeds it:
   * `is_identified`, its oldest distinct id, and of its properties only EVENT_PERSON_PROPERTIES, each of at most
   * EVENT_PERSON_VALUE_BYTES of JSON (PostHog sends these three keys only, and one distinct id).
   */
  eventPersons(teamId: number, distinctIds: Iterable<string>): Promise<Map<string, EventPerson>> {
    return this.persons.eventPersons(
      teamId,
      [...new Set(distinctIds)],
      EVENT_PERSON_PROPERTIES,
      EVENT_PERSON_VALUE_BYTES,
    );
  }
}
