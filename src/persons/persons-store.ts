import type { PersonsRepository } from './persons.repository.js';

/**
 * The seam of the persons store (docs/data-access.md, "Stores"): what the persons service — the one place that
 * applies captured events to persons (PersonUpdatesService) and every other write of persons — asks of stored
 * persons. Today PostgreSQL's `persons` and `person_distinct_ids` (PersonsRepository implements it); another
 * implementation is bound to PERSONS_STORE in PersonsModule and passes test/stores/persons-store.e2e-spec.ts.
 * Every method runs in the caller's transaction.
 */
export type PersonsStore = Pick<
  PersonsRepository,
  /** The person (id, uuid) of each distinct id, creating the missing ones (sorted ids: race-safe). */
  | 'resolveDistinctIds'
  /** The person of each distinct id that has one, creating and locking none. */
  | 'personsByDistinctId'
  /** The person id of each distinct id that has one (links). */
  | 'personIdsByDistinctId'
  /** A new person with this distinct id; its id. */
  | 'createForDistinctId'
  /** Puts a distinct id on a person; the person it is on (another, when it raced). */
  | 'addDistinctId'
  /** Moves every distinct id of `fromId` to `intoId` and deletes `fromId`. */
  | 'mergeInto'
  /** Marks a person identified. */
  | 'markIdentified'
  /** Locks a person's row and reads its properties when they are at most `loadBytes` rendered. */
  | 'lockProperties'
  /** Some properties of a person, each value within `valueBytes`. */
  | 'someProperties'
  /** Replaces a person's properties. */
  | 'replaceProperties'
  /** The distinct ids of a person by its id or uuid. */
  | 'distinctIdsOfPerson'
  /** The persons of distinct ids as an event embeds them. */
  | 'eventPersons'
>;

/** The injection token of the persons store (PersonsModule binds it to PersonsRepository). */
export const PERSONS_STORE = Symbol('PersonsStore');
