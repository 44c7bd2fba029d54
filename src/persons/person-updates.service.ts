import { Injectable, Logger } from '@nestjs/common';
import { countSetValues, jsonBytesWithin } from './person-properties.js';
import {
  emptyFold,
  type FoldedUpdate,
  foldPersonEvent,
  type PersonEvent,
  unsetKeys,
} from './person-event-updates.js';
import { PersonsService } from './persons.service.js';

export type { PersonEvent };

/** Links (`$identify`, ...) made between two renewals of the statements' bound (`bound`). */
const LINKS_PER_BOUND = 50;

/** How the caller's request bounds the work (its deadline), and what a merge of two persons must re-point. */
export interface PersonUpdateHooks {
  /** Throws once the request's deadline has passed (cheap, called often). */
  check?: () => void;
  /** Throws once it has passed, and bounds the next statements by the time left (a statement, called rarely). */
  bound?: () => Promise<void>;
  /** Called before person `fromId` is merged into `intoId`, in the transaction (recordings re-point theirs). */
  beforeMerge?: (fromId: number, intoId: number) => Promise<void>;
}

export interface PersonUpdatesResult {
  /** The person (id and uuid) of every distinct id of the events. */
  persons: Map<string, { id: number; uuid: string }>;
  /**
   * Events whose `$set`/`$set_once` were left out: past what one request may set on one person
   * (PERSON_SET_MAX_KEYS / _BYTES, counted over the request's events in order), or, per person, updates that
   * would have taken it past PERSON_PROPERTIES_MAX_BYTES.
   */
  setsDropped: number;
}

/**
 * The one place persons are changed by captured events, for every ingestion sink (docs/decisions.md §10, §13):
 *
 * 1. links: each event that links two distinct ids (`$identify` with `$anon_distinct_id`, `$create_alias`,
 *    `$merge_dangerously`), in the order sent, puts both on one person, merging two persons into the older one
 *    (`PersonsService.link`, PostHog's plugin-server/src/worker/ingestion/persons/person-merge-service.ts); the
 *    person is marked identified;
 * 2. persons: the person of every distinct id is found or created (sorted, race-safe);
 * 3. properties: the events of each person are folded in order (`foldPersonEvent`: per event `$set_once`, `$set`,
 *    then `$unset`, PostHog's person-update.ts), one write per person in person id order, within
 *    PERSON_PROPERTIES_MAX_BYTES (`PersonsService.applyPropertyUpdates`). One request sets at most
 *    PERSON_SET_MAX_KEYS values and PERSON_SET_MAX_BYTES bytes on one person: counted event by event, the
 *    `$set`/`$set_once` of an event past it are left out (the events before it keep theirs, as PostHog, which
 *    handles each event by itself, would have applied them); its `$unset` still applies.
 *
 * Runs inside the caller's transaction, so a request's persons commit with its events and recordings.
 */
@Injectable()
export class PersonUpdatesService {
  private readonly logger = new Logger(PersonUpdatesService.name);

  constructor(private readonly persons: PersonsService) {}

  async apply(
    teamId: number,
    events: readonly PersonEvent[],
    now: Date,
    hooks: PersonUpdateHooks = {},
  ): Promise<PersonUpdatesResult> {
    const check = hooks.check ?? (() => undefined);
    const bound = hooks.bound ?? (() => Promise.resolve());
    // Links first, in the order sent, so every event of the request sees the merged person. A chain of merges
    // stops at the deadline: checked before each link, the statements' bound renewed every LINKS_PER_BOUND.
    const identified = new Set<number>();
    let links = 0;
    for (const event of events) {
      if (event.linkedId === null) continue;
      check();
      if (++links % LINKS_PER_BOUND === 0) await bound();
      identified.add(
        await this.persons.link(
          teamId,
          event.distinctId,
          event.linkedId,
          now,
          hooks.beforeMerge ?? (() => Promise.resolve()),
        ),
      );
    }
    await bound();
    const persons = await this.persons.resolvePersons(
      teamId,
      events.map((e) => e.distinctId),
      now,
    );
    const { updates, setsDropped } = this.fold(teamId, events, persons);
    // Linked persons are marked identified in the pass that locks persons in id order (a person merged by a
    // later link of the request is gone: its mark changes nothing, and the survivor was returned by that link).
    for (const personId of identified) {
      const update = updates.get(personId);
      if (update) update.identify = true;
      else updates.set(personId, { ...emptyFold(), identify: true });
    }
    await bound();
    const outcome = await this.persons.applyPropertyUpdates(updates, teamId, check);
    return { persons, setsDropped: setsDropped + outcome.refused };
  }

  /**
   * The persons events with `$process_person_profile: false` are attached to: the person each distinct id has
   * (before the request, or made by its other events in this transaction), creating, linking and updating none;
   * a distinct id without one is left out (its event has no person). PostHog's ingestion does the same: its
   * personless step reads the distinct id's person and uses it when there is one, else gives the event a person
   * id derived from the distinct id that no person row backs (plugin-server/src/ingestion/event-processing/
   * process-personless-step.ts, `uuidFromDistinctId`), and applies no `$set` (person-state.ts returns before
   * updating when `processPerson` is false).
   */
  personless(
    teamId: number,
    distinctIds: Iterable<string>,
  ): Promise<Map<string, { id: number; uuid: string }>> {
    return this.persons.existingPersons(teamId, distinctIds);
  }

  /** One folded update per person, the request's PERSON_SET_MAX_KEYS / _BYTES counted event by event. */
  private fold(
    teamId: number,
    events: readonly PersonEvent[],
    persons: Map<string, { id: number }>,
  ): { updates: Map<number, FoldedUpdate>; setsDropped: number } {
    const limits = this.persons.setLimits;
    const updates = new Map<number, FoldedUpdate>();
    // What the request sets on each person so far (values and bytes, a key set by two events counted twice).
    const setSoFar = new Map<number, { values: number; bytes: number }>();
    let setsDropped = 0;
    for (const event of events) {
      const personId = persons.get(event.distinctId)?.id;
      if (personId === undefined) continue;
      const set = event.set ?? {};
      const setOnce = event.setOnce ?? {};
      const unset = unsetKeys(event.unset);
      let kept = { set: event.set, setOnce: event.setOnce, unset };
      if (Object.keys(set).length || Object.keys(setOnce).length) {
        const so = setSoFar.get(personId) ?? { values: 0, bytes: 0 };
        const values =
          so.values + countSetValues(set, limits.maxKeys) + countSetValues(setOnce, limits.maxKeys);
        const bytes =
          so.bytes + jsonBytesWithin(set, limits.maxBytes) + jsonBytesWithin(setOnce, limits.maxBytes);
        if (values > limits.maxKeys || bytes > limits.maxBytes) {
          setsDropped++;
          kept = { set: null, setOnce: null, unset };
        } else setSoFar.set(personId, { values, bytes });
      }
      if (!Object.keys(set).length && !Object.keys(setOnce).length && !unset.length) continue;
      let update = updates.get(personId);
      if (!update) updates.set(personId, (update = emptyFold()));
      foldPersonEvent(update, kept);
    }
    if (setsDropped) {
      this.logger.warn(
        { teamId, droppedSets: setsDropped, maxKeys: limits.maxKeys, maxBytes: limits.maxBytes },
        `capture dropped ${setsDropped} $set/$set_once that would have set more on one person in one request than PERSON_SET_MAX_KEYS (${limits.maxKeys}) or PERSON_SET_MAX_BYTES (${limits.maxBytes})`,
      );
    }
    return { updates, setsDropped };
  }
}
