import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { isUniqueViolation } from '../common/errors/database-errors.js';

/** Unique (team_id, distinct_id): the guard that makes person creation race-safe. */
export const DISTINCT_ID_KEY = 'person_distinct_ids_team_distinct_id_key';

/** Queries on persons and their distinct ids; every method runs on the caller's transaction manager. */
@Injectable()
export class PersonsRepository {
  /** The person id of each of these distinct ids that has one in the project. */
  async personIdsByDistinctId(
    manager: EntityManager,
    teamId: number,
    distinctIds: readonly string[],
  ): Promise<Map<string, number>> {
    if (!distinctIds.length) return new Map();
    const rows: { distinct_id: string; person_id: number }[] = await manager.query(
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
  async createForDistinctId(
    manager: EntityManager,
    teamId: number,
    distinctId: string,
    now: Date,
  ): Promise<number> {
    await manager.query('SAVEPOINT person_create');
    try {
      const [person]: { id: number }[] = await manager.query(
        `INSERT INTO persons (team_id, properties, created_at) VALUES ($1, '{}'::jsonb, $2) RETURNING id`,
        [teamId, now],
      );
      await manager.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)`,
        [teamId, distinctId, person.id],
      );
      await manager.query('RELEASE SAVEPOINT person_create');
      return person.id;
    } catch (error) {
      if (!isUniqueViolation(error, DISTINCT_ID_KEY)) throw error;
      await manager.query('ROLLBACK TO SAVEPOINT person_create');
      const existing = await this.personIdsByDistinctId(manager, teamId, [distinctId]);
      const id = existing.get(distinctId);
      if (id === undefined) throw error;
      return id;
    }
  }

  /**
   * Shallow-merges properties into a person in one statement (no lost update under concurrency): keys of
   * `setOnce` only where the person has none, then every key of `set`.
   */
  async mergeProperties(
    manager: EntityManager,
    personId: number,
    set: Record<string, unknown>,
    setOnce: Record<string, unknown> = {},
  ): Promise<void> {
    await manager.query(
      `UPDATE persons SET properties = ($2::jsonb || properties) || $3::jsonb WHERE id = $1`,
      [personId, JSON.stringify(setOnce), JSON.stringify(set)],
    );
  }
}
