import { Injectable } from '@nestjs/common';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { type PropertyFilter, propertyFilterSql } from '../common/filters/property-filters.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { PROTECTED_PERSON_PROPERTIES } from './person-properties.js';
import type { EventPerson, PersonsStore } from './persons-store.js';

export type { EventPerson } from './persons-store.js';

/** Unique (team_id, distinct_id): the guard that makes person creation race-safe. */
export const DISTINCT_ID_KEY = 'person_distinct_ids_team_distinct_id_key';

/** A person as other resources embed it (a recording's `person`): a bounded view (`personSelectSql`). */
export interface PersonSummary {
  id: number;
  uuid: string;
  properties: Record<string, unknown>;
  /** Some properties were left out of `properties` (the person's were over EMBEDDED_PERSON_MAX_BYTES). */
  propertiesTruncated: boolean;
  createdAt: Date;
  /** Oldest first, at most PERSON_DISTINCT_IDS_SHOWN. */
  distinctIds: string[];
  /** How many distinct ids the person has. */
  distinctIdCount: number;
}

/**
 * Most bytes of a person's properties (as PostgreSQL renders their JSON) that lists and exports read: twice the
 * largest PERSON_PROPERTIES_MAX_BYTES allowed (1mb), so a person within the limit is always read in full, while
 * one stored before the limit existed (megabytes of `$set`) reads as `{}` instead of filling an export batch.
 * Writes keep persons within PERSON_PROPERTIES_MAX_BYTES; this is the defence behind it.
 */
export const PERSON_PROPERTIES_READ_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Most bytes of the properties of a person embedded in another resource (a recording's `person`, one per row of
 * the recordings list): a person whose properties' JSON is larger shows the identifying properties
 * (PROTECTED_PERSON_PROPERTIES) first, then the others by key, each value of at most
 * EMBEDDED_PERSON_VALUE_MAX_BYTES, as long as they fit, and is flagged `properties_truncated`.
 */
export const EMBEDDED_PERSON_MAX_BYTES = 16 * 1024;
export const EMBEDDED_PERSON_VALUE_MAX_BYTES = 1000;

/** PROTECTED_PERSON_PROPERTIES as an SQL text array. */
const PROTECTED_KEYS_SQL = `ARRAY[${[...PROTECTED_PERSON_PROPERTIES].map((k) => `'${k.replace(/'/g, "''")}'`).join(', ')}]::text[]`;

/** SQL of the properties of the person `alias`, `{}` when past PERSON_PROPERTIES_READ_MAX_BYTES. */
export function cappedPropertiesSql(alias: string): string {
  return `CASE WHEN octet_length(${alias}.properties::text) <= ${PERSON_PROPERTIES_READ_MAX_BYTES} THEN ${alias}.properties ELSE '{}'::jsonb END`;
}

/** The columns `personSelectSql` adds to a row (null when the joined person is missing). */
export interface PersonColumns {
  personId: number | null;
  personUuid: string | null;
  personProperties: Record<string, unknown> | null;
  personPropertiesTruncated: boolean | null;
  personCreatedMs: number | null;
  personDistinctIds: string[] | null;
  personDistinctIdCount: number | null;
}

/**
 * SQL fragment for queries joining `persons` as `alias` (to a row whose project is `team`, for Citus): the bounded
 * person (PersonColumns, read with `personFromColumns`): its properties within EMBEDDED_PERSON_MAX_BYTES, its oldest
 * PERSON_DISTINCT_IDS_SHOWN distinct ids and their count. Hot list queries embed it: a page of recordings reads its
 * persons in the same statement, each row a bounded size whatever the person holds.
 */
export function personSelectSql(alias: string, team = `${alias}.team_id`): string {
  const whole = `octet_length(${alias}.properties::text) <= ${EMBEDDED_PERSON_MAX_BYTES}`;
  return `${alias}.id AS "personId", ${alias}.uuid AS "personUuid",
    CASE WHEN ${whole} THEN ${alias}.properties ELSE coalesce((
      SELECT jsonb_object_agg(k.key, k.value) FROM (
        SELECT v.key, v.value, sum(octet_length(v.key) + v.bytes + 4) OVER (
                 ORDER BY v.key = ANY(${PROTECTED_KEYS_SQL}) DESC, v.key ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto
          FROM (SELECT j.key, j.value, octet_length(j.value::text) AS bytes FROM jsonb_each(${alias}.properties) j) v
         WHERE v.bytes <= ${EMBEDDED_PERSON_VALUE_MAX_BYTES}) k
       WHERE k.upto <= ${EMBEDDED_PERSON_MAX_BYTES}), '{}'::jsonb) END AS "personProperties",
    NOT (${whole}) AS "personPropertiesTruncated",
    (extract(epoch FROM ${alias}.created_at) * 1000)::float8 AS "personCreatedMs",
    coalesce((SELECT array_agg(s.distinct_id ORDER BY s.id) FROM (SELECT d.id, d.distinct_id FROM person_distinct_ids d
       WHERE d.team_id = ${team} AND d.person_id = ${alias}.id ORDER BY d.id LIMIT ${PERSON_DISTINCT_IDS_SHOWN}) s), '{}')
    AS "personDistinctIds", (SELECT count(*)::int FROM person_distinct_ids d WHERE d.team_id = ${team} AND d.person_id = ${alias}.id) AS "personDistinctIdCount"`;
}

/** The person selected by `personSelectSql`, or null when the row has none. */
export function personFromColumns(row: PersonColumns): PersonSummary | null {
  if (row.personId === null || row.personUuid === null) return null;
  return {
    id: row.personId,
    uuid: row.personUuid,
    properties: row.personProperties ?? {},
    propertiesTruncated: row.personPropertiesTruncated ?? false,
    createdAt: new Date(row.personCreatedMs ?? 0),
    distinctIds: row.personDistinctIds ?? [],
    distinctIdCount: row.personDistinctIdCount ?? 0,
  };
}

/** A person as the persons API shows it, with at most `PERSON_DISTINCT_IDS_SHOWN` of its distinct ids. */
export interface PersonRecord {
  id: number;
  uuid: string;
  properties: Record<string, unknown>;
  createdAt: Date;
  isIdentified: boolean;
  /** Oldest first, at most PERSON_DISTINCT_IDS_SHOWN. */
  distinctIds: string[];
  /** How many distinct ids the person has. */
  distinctIdCount: number;
}

/** Filters of the persons list (all optional; every one given must hold). */
export interface PersonFilters {
  distinctId?: string;
  uuids?: string[];
  email?: string;
  /** In `properties.email`, `properties.name`, any distinct id (case-insensitive), or the uuid. */
  search?: string;
  properties?: PropertyFilter[];
}

/** Most distinct ids of one person the persons API lists (`distinct_ids_count` says how many there are). */
export const PERSON_DISTINCT_IDS_SHOWN = 100;

/**
 * The columns of a PersonRecord of the person `p` (its distinct ids capped, its properties as `cappedPropertiesSql`),
 * in a statement whose `$1` is the project. Every distributed table names the project as `$1`, not through
 * `p.team_id`: on Citus a statement is routed to the project's shard only when each of its tables is restricted to
 * the project (docs/citus.md; test/database/citus-routing.spec.ts).
 */
const RECORD_SELECT = `p.id, p.uuid, ${cappedPropertiesSql('p')} AS properties, p.created_at AS "createdAt",
  p.is_identified AS "isIdentified",
  coalesce((SELECT array_agg(s.distinct_id ORDER BY s.id) FROM (SELECT d.id, d.distinct_id FROM person_distinct_ids d
    WHERE d.team_id = $1 AND d.person_id = p.id ORDER BY d.id LIMIT ${PERSON_DISTINCT_IDS_SHOWN}) s), '{}') AS
  "distinctIds", (SELECT count(*)::int FROM person_distinct_ids d WHERE d.team_id = $1 AND d.person_id = p.id)
  AS "distinctIdCount"`;

/** The persons list's WHERE conditions on `p`, with their parameters after `$1` (the project). */
function personConditions(filters: PersonFilters, params: unknown[]): string {
  const bind = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ['p.team_id = $1'];
  if (filters.distinctId !== undefined) {
    where.push(
      `p.id = (SELECT d.person_id FROM person_distinct_ids d WHERE d.team_id = $1 AND d.distinct_id = ${bind(filters.distinctId)}::text)`,
    );
  }
  if (filters.uuids !== undefined) where.push(`p.uuid = ANY(${bind(filters.uuids)}::uuid[])`);
  if (filters.email !== undefined) where.push(`p.properties ->> 'email' = ${bind(filters.email)}::text`);
  if (filters.search !== undefined) {
    const q = bind(filters.search.toLowerCase());
    where.push(`(strpos(lower(p.properties ->> 'email'), ${q}::text) > 0
      OR strpos(lower(p.properties ->> 'name'), ${q}::text) > 0
      OR p.uuid::text = ${q}::text
      OR EXISTS (SELECT 1 FROM person_distinct_ids d WHERE d.team_id = $1 AND d.person_id = p.id AND strpos(lower(d.distinct_id), ${q}::text) > 0))`);
  }
  for (const filter of filters.properties ?? []) where.push(propertyFilterSql('p.properties', filter, bind));
  return where.join(' AND ');
}

const AT = new Date('2026-11-21T10:00:00.000Z');

/** Queries on persons and their distinct ids. Writes run inside the caller's transaction (capture's). */
@Injectable()
export class PersonsRepository extends RepositoryBase implements PersonsStore {
  /** The person id of each of these distinct ids that has one in the project. */
  @GenerateSql({ params: [1, ['user-1', 'user-2']] })
  async personIdsByDistinctId(teamId: number, distinctIds: readonly string[]): Promise<Map<string, number>> {
    if (!distinctIds.length) return new Map();
    const rows = await this.query<{ distinct_id: string; person_id: number }>(
      `SELECT distinct_id, person_id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = ANY($2::text[])`,
      [teamId, distinctIds],
    );
    return new Map(rows.map((r) => [r.distinct_id, r.person_id]));
  }

  /**
   * Creates a person for a distinct id, or returns the person another transaction created for it meanwhile:
   * the distinct id insert runs in a savepoint, and when it hits the unique key (the other transaction
   * committed first) the savepoint is rolled back and that person is read. Must run inside a transaction.
   */
  @GenerateSql({ params: (f) => [f.projectId, 'user-1', AT] })
  async createForDistinctId(teamId: number, distinctId: string, now: Date): Promise<number> {
    await this.query('SAVEPOINT person_create');
    try {
      const [person] = await this.query<{ id: number }>(
        `INSERT INTO persons (team_id, properties, created_at) VALUES ($1, '{}'::jsonb, $2) RETURNING id`,
        [teamId, now],
      );
      await this.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)`,
        [teamId, distinctId, person.id],
      );
      await this.query('RELEASE SAVEPOINT person_create');
      return person.id;
    } catch (error) {
      if (!isUniqueViolation(error, DISTINCT_ID_KEY)) throw error;
      await this.query('ROLLBACK TO SAVEPOINT person_create');
      const existing = await this.personIdsByDistinctId(teamId, [distinctId]);
      const id = existing.get(distinctId);
      if (id === undefined) throw error;
      return id;
    }
  }

  /**
   * The person (id and uuid) of each of these distinct ids, creating a person for each that has none, in one
   * statement: the distinct ids are looked up, and the persons of the missing ones and their distinct ids are
   * inserted together, in the order given (sorted by the caller, so concurrent batches wait on each other's new
   * distinct ids in one order). A distinct id another transaction gave a person meanwhile (the unique key; ON
   * CONFLICT DO NOTHING waits for that transaction) keeps that person: the person created for it here is deleted
   * again in the same transaction (never seen by anyone, exports included) and the other one is returned. Must
   * run inside a transaction.
   */
  @GenerateSql({ params: (f) => [f.projectId, ['user-1', 'user-2'], AT] })
  async resolveDistinctIds(
    teamId: number,
    distinctIds: readonly string[],
    now: Date,
  ): Promise<Map<string, { id: number; uuid: string }>> {
    const result = new Map<string, { id: number; uuid: string }>();
    if (!distinctIds.length) return result;
    const rows = await this.rows<{ distinct_id: string; id: number; uuid: string; kept: boolean }>(
      `WITH wanted AS MATERIALIZED (
         SELECT w.distinct_id, w.ord, pd.person_id
           FROM unnest($2::text[]) WITH ORDINALITY AS w(distinct_id, ord)
           LEFT JOIN person_distinct_ids pd ON pd.team_id = $1 AND pd.distinct_id = w.distinct_id
       ), input AS MATERIALIZED (
         SELECT distinct_id, ord, gen_random_uuid() AS uuid FROM wanted WHERE person_id IS NULL
       ), p AS (
         INSERT INTO persons (team_id, uuid, properties, created_at)
         SELECT $1, input.uuid, '{}'::jsonb, $3 FROM input ORDER BY input.ord
         RETURNING id, uuid
       ), d AS (
         INSERT INTO person_distinct_ids (team_id, distinct_id, person_id)
         SELECT $1, input.distinct_id, p.id FROM input JOIN p ON p.uuid = input.uuid ORDER BY input.ord
         ON CONFLICT (team_id, distinct_id) DO NOTHING
         RETURNING person_id
       )
       SELECT w.distinct_id, w.person_id AS id, pe.uuid, true AS kept
         FROM wanted w JOIN persons pe ON pe.team_id = $1 AND pe.id = w.person_id
       UNION ALL
       SELECT input.distinct_id, p.id, p.uuid, d.person_id IS NOT NULL
         FROM input JOIN p ON p.uuid = input.uuid LEFT JOIN d ON d.person_id = p.id`,
      [teamId, distinctIds, now],
    );
    const lost: number[] = [];
    const taken: string[] = [];
    for (const row of rows) {
      if (row.kept) result.set(row.distinct_id, { id: row.id, uuid: row.uuid });
      else {
        lost.push(row.id);
        taken.push(row.distinct_id);
      }
    }
    if (lost.length) {
      await this.query(`DELETE FROM persons WHERE team_id = $1 AND id = ANY($2::int[])`, [teamId, lost]);
      const winners = await this.personsByDistinctId(teamId, taken);
      for (const distinctId of taken) {
        const person = winners.get(distinctId);
        if (!person) throw new Error(`distinct id ${distinctId}: its person vanished while created`);
        result.set(distinctId, person);
      }
    }
    return result;
  }

  /** The person (id and uuid) of each of these distinct ids that has one in the project. */
  @GenerateSql({ params: [1, ['user-1', 'user-2']] })
  async personsByDistinctId(
    teamId: number,
    distinctIds: readonly string[],
  ): Promise<Map<string, { id: number; uuid: string }>> {
    const rows = await this.query<{ distinct_id: string; id: number; uuid: string }>(
      `SELECT pd.distinct_id, p.id, p.uuid
         FROM person_distinct_ids pd JOIN persons p ON p.team_id = pd.team_id AND p.id = pd.person_id
        WHERE pd.team_id = $1 AND pd.distinct_id = ANY($2::text[])`,
      [teamId, distinctIds],
    );
    return new Map(rows.map((r) => [r.distinct_id, { id: r.id, uuid: r.uuid }]));
  }

  /**
   * Adds a distinct id to a person; when another transaction added it meanwhile (the unique key), the person it
   * belongs to is returned instead. Must run inside a transaction.
   */
  @GenerateSql({ params: (f) => [f.projectId, 'user-9', 1] })
  async addDistinctId(teamId: number, distinctId: string, personId: number): Promise<number> {
    await this.query('SAVEPOINT person_alias');
    try {
      await this.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)`,
        [teamId, distinctId, personId],
      );
      await this.query('RELEASE SAVEPOINT person_alias');
      return personId;
    } catch (error) {
      if (!isUniqueViolation(error, DISTINCT_ID_KEY)) throw error;
      await this.query('ROLLBACK TO SAVEPOINT person_alias');
      const existing = (await this.personIdsByDistinctId(teamId, [distinctId])).get(distinctId);
      if (existing === undefined) throw error;
      return existing;
    }
  }

  /**
   * Merges person `fromId` into `intoId`: its distinct ids move (their versions rise, for the persons export), its
   * properties fill the keys `intoId` lacks, and it is deleted. The caller re-points what else referred to it first.
   */
  @GenerateSql({ params: (f) => [f.projectId, 2, 1] })
  async mergeInto(teamId: number, fromId: number, intoId: number): Promise<void> {
    const ids = [teamId, fromId, intoId];
    await this.query(
      `UPDATE person_distinct_ids SET person_id = $3 WHERE team_id = $1 AND person_id = $2`,
      ids,
    );
    await this.query(
      `UPDATE persons SET properties = coalesce((SELECT properties FROM persons WHERE team_id = $1 AND id = $2),
         '{}'::jsonb) || properties WHERE team_id = $1 AND id = $3`,
      ids,
    );
    await this.query(`DELETE FROM persons WHERE team_id = $1 AND id = $2`, [teamId, fromId]);
  }

  /** The distinct ids of a project's person given by its id or uuid (empty when there is no such person). */
  @GenerateSql({ params: [1, '1'] })
  async distinctIdsOfPerson(teamId: number, idOrUuid: string): Promise<string[]> {
    const byId = /^\d{1,9}$/.test(idOrUuid);
    const rows = await this.query<{ distinct_id: string }>(
      `SELECT d.distinct_id FROM person_distinct_ids d JOIN persons p ON p.team_id = d.team_id AND p.id = d.person_id
       WHERE d.team_id = $1 AND ${byId ? 'p.id = $2::int' : 'p.uuid::text = lower($2)'} ORDER BY d.id LIMIT 10000`,
      [teamId, idOrUuid],
    );
    return rows.map((r) => r.distinct_id);
  }

  /**
   * Locks a person for an update of its properties (FOR UPDATE, until the transaction ends) and reads them when
   * their JSON text (as PostgreSQL renders it) is at most `loadBytes`; larger ones (stored before the size limit)
   * are not read at all: `properties` is null and `renderedBytes` says how large they are. Null when the person
   * does not exist.
   */
  @GenerateSql({ params: (f) => [f.projectId, 1, 1048576] })
  async lockProperties(
    teamId: number,
    personId: number,
    loadBytes: number,
  ): Promise<{ properties: Record<string, unknown> | null; renderedBytes: number } | null> {
    const rows = await this.rows<{ properties: string | null; rendered_bytes: number }>(
      `SELECT CASE WHEN octet_length(t.text) <= $3 THEN t.text END AS properties,
              octet_length(t.text) AS rendered_bytes
         FROM persons p CROSS JOIN LATERAL (SELECT p.properties::text AS text) t
        WHERE p.team_id = $1 AND p.id = $2
          FOR UPDATE OF p`,
      [teamId, personId, loadBytes],
    );
    if (!rows.length) return null;
    const row = rows[0];
    return {
      properties: row.properties === null ? null : (JSON.parse(row.properties) as Record<string, unknown>),
      renderedBytes: Number(row.rendered_bytes),
    };
  }

  /** Of a person's properties, only these keys, each with a value of at most `valueBytes` (JSON text). */
  @GenerateSql({ params: (f) => [f.projectId, 1, ['email', 'name'], 1024] })
  async someProperties(
    teamId: number,
    personId: number,
    keys: readonly string[],
    valueBytes: number,
  ): Promise<Record<string, unknown>> {
    const rows = await this.query<{ properties: Record<string, unknown> | null }>(
      `SELECT jsonb_object_agg(e.key, e.value) AS properties
         FROM persons p CROSS JOIN LATERAL jsonb_each(p.properties) e
        WHERE p.team_id = $1 AND p.id = $2 AND e.key = ANY($3::text[]) AND octet_length(e.value::text) <= $4`,
      [teamId, personId, keys, valueBytes],
    );
    return rows[0]?.properties ?? {};
  }

  /** Replaces a person's properties (bounded by the caller, `PersonsService`). */
  @GenerateSql({ params: (f) => [f.projectId, 1, { email: 'ada@example.com', plan: 'pro' }] })
  async replaceProperties(teamId: number, id: number, properties: Record<string, unknown>): Promise<void> {
    const set = JSON.stringify(properties);
    await this.rows(`UPDATE persons SET properties = $3::jsonb WHERE team_id = $1 AND id = $2`, [
      teamId,
      id,
      set,
    ]);
  }

  /** Marks a person identified (`$identify`, `$create_alias`); a no-op when it is already. */
  @GenerateSql({ params: (f) => [f.projectId, 1] })
  async markIdentified(teamId: number, personId: number): Promise<void> {
    await this.query(
      `UPDATE persons SET is_identified = true WHERE team_id = $1 AND id = $2 AND NOT is_identified`,
      [teamId, personId],
    );
  }

  /**
   * One page of a project's persons, newest first (by id), bounded in rows (`limit`) and in bytes: rows are kept
   * while the bytes of the rows before them (properties as JSON text and the distinct ids shown) stay under
   * `maxBytes`, so the first row is always kept. `total` counts every match.
   */
  @GenerateSql({
    params: (f) => [
      f.projectId,
      { search: 'ada', properties: [{ key: 'plan', operator: 'exact', values: ['pro'] }] },
      100,
      0,
      8388608,
    ],
  })
  async list(
    teamId: number,
    filters: PersonFilters,
    limit: number,
    offset: number,
    maxBytes: number,
  ): Promise<{ rows: PersonRecord[]; total: number }> {
    const params: unknown[] = [teamId];
    const condition = personConditions(filters, params);
    const counted = [...params];
    params.push(maxBytes);
    const rows = await this.query<PersonRecord>(
      `WITH matched AS (
         SELECT p.id, octet_length((${cappedPropertiesSql('p')})::text)
                  + coalesce((SELECT sum(octet_length(s.distinct_id) + 3) FROM (SELECT d.distinct_id FROM person_distinct_ids d
                      WHERE d.team_id = $1 AND d.person_id = p.id ORDER BY d.id LIMIT ${PERSON_DISTINCT_IDS_SHOWN}) s), 0) AS bytes
           FROM persons p WHERE ${condition}
          ORDER BY p.id DESC LIMIT ${Number(limit)} OFFSET ${Number(offset)}
       ), kept AS (
         SELECT id, sum(bytes) OVER (ORDER BY id DESC) - bytes AS before FROM matched
       )
       SELECT ${RECORD_SELECT} FROM kept JOIN persons p ON p.team_id = $1 AND p.id = kept.id
        WHERE kept.before < $${params.length} ORDER BY p.id DESC`,
      params,
    );
    const [{ n }] = await this.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM persons p WHERE ${condition}`,
      counted,
    );
    return { rows, total: n };
  }

  /** A project's person by its id or uuid, or null. */
  @GenerateSql({ params: [1, '1'] })
  async findRecord(teamId: number, idOrUuid: string): Promise<PersonRecord | null> {
    const byId = /^\d{1,9}$/.test(idOrUuid);
    const rows = await this.query<PersonRecord>(
      `SELECT ${RECORD_SELECT} FROM persons p
        WHERE p.team_id = $1 AND ${byId ? 'p.id = $2::int' : 'p.uuid::text = lower($2)'}`,
      [teamId, idOrUuid],
    );
    return rows[0] ?? null;
  }

  /**
   * The person of each of these distinct ids that has one in the project, as an event embeds it: the flag, its
   * oldest distinct id, and of its properties only `keys`, each whose JSON text is at most `valueBytes`.
   */
  @GenerateSql({ params: [1, ['user-1', 'user-2'], ['email', 'name', 'username'], 1024] })
  async eventPersons(
    teamId: number,
    distinctIds: readonly string[],
    keys: readonly string[],
    valueBytes: number,
  ): Promise<Map<string, EventPerson>> {
    if (!distinctIds.length) return new Map();
    const rows = await this.query<EventPerson & { distinctId: string }>(
      `SELECT d.distinct_id AS "distinctId", p.is_identified AS "isIdentified",
              (SELECT f.distinct_id FROM person_distinct_ids f
                WHERE f.team_id = $1 AND f.person_id = p.id ORDER BY f.id LIMIT 1)
                AS "firstDistinctId",
              coalesce((SELECT jsonb_object_agg(k.key, p.properties -> k.key) FROM unnest($3::text[]) AS k(key)
                 WHERE p.properties ? k.key AND octet_length((p.properties -> k.key)::text) <= $4), '{}'::jsonb)
                AS properties
         FROM person_distinct_ids d JOIN persons p ON p.team_id = $1 AND p.id = d.person_id
        WHERE d.team_id = $1 AND d.distinct_id = ANY($2::text[])`,
      [teamId, distinctIds, keys, valueBytes],
    );
    return new Map(rows.map(({ distinctId, ...person }) => [distinctId, person]));
  }

  /**
   * Deletes at most `limit` distinct ids of a (deleted) project, or once none is left at most `limit` of its
   * persons; how many rows.
   */
  // A project without distinct ids: both statements run.
  @GenerateSql({ params: [2147483647, 1000] })
  async deleteOfProject(teamId: number, limit: number): Promise<number> {
    const ids = await this.modify(
      `DELETE FROM person_distinct_ids WHERE team_id = $1 AND id IN (
         SELECT id FROM person_distinct_ids WHERE team_id = $1 LIMIT $2)`,
      [teamId, limit],
    );
    if (ids.affected) return ids.affected;
    const persons = await this.modify(
      `DELETE FROM persons WHERE team_id = $1 AND id IN (SELECT id FROM persons WHERE team_id = $1 LIMIT $2)`,
      [teamId, limit],
    );
    return persons.affected;
  }
}
