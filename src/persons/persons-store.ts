/**
 * The seam of the persons store (docs/data-access.md, "Stores"): what the persons service — the one place that
 * applies captured events to persons (PersonUpdatesService) and every other write of persons — asks of stored
 * persons. A standalone interface: today PostgreSQL's `persons` and `person_distinct_ids` implement it
 * (PersonsRepository); another implementation is bound to PERSONS_STORE in PersonsModule and passes
 * test/stores/persons-store.e2e-spec.ts. Every method runs in the caller's transaction. A person is named by its
 * id (a number, within its project) and its uuid (what events and the API name it by).
 */

/** A person as an event of the events API embeds it (PostHog's `person` of an event). */
export interface EventPerson {
  isIdentified: boolean;
  /** The person's oldest distinct id. */
  firstDistinctId: string;
  /** Only the keys asked for, each of at most the bytes asked for. */
  properties: Record<string, unknown>;
}

/** A person's two names. */
export interface PersonRef {
  id: number;
  uuid: string;
}

export interface PersonsStore {
  /**
   * The person of each distinct id, creating the missing ones (one person per new distinct id). Safe against
   * concurrent callers: a distinct id has one person, whoever creates it.
   */
  resolveDistinctIds(
    teamId: number,
    distinctIds: readonly string[],
    now: Date,
  ): Promise<Map<string, PersonRef>>;
  /** The person of each distinct id that has one, creating and locking none. */
  personsByDistinctId(teamId: number, distinctIds: readonly string[]): Promise<Map<string, PersonRef>>;
  /** The person id of each distinct id that has one. */
  personIdsByDistinctId(teamId: number, distinctIds: readonly string[]): Promise<Map<string, number>>;
  /** A new person with this distinct id; its id. */
  createForDistinctId(teamId: number, distinctId: string, now: Date): Promise<number>;
  /** Puts a distinct id on a person; the person it is on (another, when a concurrent caller won). */
  addDistinctId(teamId: number, distinctId: string, personId: number): Promise<number>;
  /** Moves every distinct id of `fromId` to `intoId`, keeps `intoId`'s properties over `fromId`'s, deletes `fromId`. */
  mergeInto(teamId: number, fromId: number, intoId: number): Promise<void>;
  /** Marks a person identified. */
  markIdentified(teamId: number, personId: number): Promise<void>;
  /**
   * Locks a person (until the caller's transaction ends) and reads its properties when they are at most
   * `loadBytes` rendered as JSON (else null, with their size); null when there is no such person.
   */
  lockProperties(
    teamId: number,
    personId: number,
    loadBytes: number,
  ): Promise<{ properties: Record<string, unknown> | null; renderedBytes: number } | null>;
  /** Some properties of a person, each value within `valueBytes` (larger ones left out). */
  someProperties(
    teamId: number,
    personId: number,
    keys: readonly string[],
    valueBytes: number,
  ): Promise<Record<string, unknown>>;
  /** Replaces a person's properties. */
  replaceProperties(teamId: number, id: number, properties: Record<string, unknown>): Promise<void>;
  /** The distinct ids of a person by its id or uuid, oldest first (bounded). */
  distinctIdsOfPerson(teamId: number, idOrUuid: string): Promise<string[]>;
  /** The persons of distinct ids as an event embeds them, with only `keys` of their properties. */
  eventPersons(
    teamId: number,
    distinctIds: readonly string[],
    keys: readonly string[],
    valueBytes: number,
  ): Promise<Map<string, EventPerson>>;
}

/** The injection token of the persons store (PersonsModule binds it to PersonsRepository). */
export const PERSONS_STORE = Symbol('PersonsStore');
