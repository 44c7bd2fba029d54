import { Injectable } from '@nestjs/common';
import { RepositoryBase } from '../database/repository-base.js';
import { prepared } from '../database/prepared-sql.js';

/** An entry to insert. */
export interface NewActivityLog {
  organizationId: string | null;
  teamId: number | null;
  userId: number | null;
  apiKeyId: string | null;
  isSystem: boolean;
  activity: string;
  scope: string;
  itemId: string | null;
  detail: Record<string, unknown>;
  ip: string | null;
  /** A SCIM write's domain: the entry's organization is the domain's when none is given. */
  domainId?: string | null;
  /**
   * Whether `detail.changes` gives way to the changes the database captured in this transaction (the
   * `activity_capture_changes` triggers, migration ActivityChangesCapture), when there are any.
   */
  capturedChanges?: boolean;
}

/** An entry as the list reads it, with its user. */
export interface ActivityLogRow {
  id: string;
  organization_id: string | null;
  team_id: number | null;
  user_id: number | null;
  api_key_id: string | null;
  is_system: boolean;
  activity: string;
  scope: string;
  item_id: string | null;
  detail: Record<string, unknown>;
  ip: string | null;
  created_at: Date;
  /** created_at in microseconds since the epoch, as text: the cursor's position (a Date keeps milliseconds). */
  at_us: string;
  user_uuid: string | null;
  user_distinct_id: string | null;
  user_first_name: string | null;
  user_last_name: string | null;
  user_email: string | null;
}

/** Which entries a list reads. */
export interface ActivityLogFilter {
  /** The project's entries, or the organization's (every entry of the organization, its projects' too). */
  teamId?: number;
  organizationId?: string;
  userUuid?: string;
  scopes?: readonly string[];
  /** Scopes left out (those of resources the reader may not see). */
  hiddenScopes?: readonly string[];
  itemId?: string;
  from?: Date;
  to?: Date;
}

/** A position in the list: older than (`before`) or newer than (`after`) the entry at (`atUs`, `id`). */
export interface ActivityCursor {
  direction: 'before' | 'after';
  atUs: string;
  id: string;
}

const COLUMNS = `a.id, a.organization_id, a.team_id, a.user_id, a.api_key_id, a.is_system, a.activity, a.scope,
       a.item_id, a.detail, host(a.ip) AS ip, a.created_at,
       (extract(epoch FROM a.created_at) * 1000000)::bigint::text AS at_us,
       u.uuid AS user_uuid, u.distinct_id AS user_distinct_id, u.first_name AS user_first_name,
       u.last_name AS user_last_name, u.email AS user_email`;

/** The microseconds of a cursor as a timestamp, exactly. */
const CURSOR_AT = `('epoch'::timestamptz + $CURSOR_US::bigint * interval '1 microsecond')`;

/**
 * The activity log's statements: one INSERT per entry (an API write's in the write's transaction), the lists by
 * project or organization newest first through a keyset cursor, and the retention prune (the one DELETE the
 * table's trigger lets through, for rows older than the cutoff it sets in its own transaction).
 */
@Injectable()
export class ActivityLogRepository extends RepositoryBase {
  /**
   * Inserts an entry in the caller's transaction (or alone). Without an organization, the project's (a project
   * route); with `capturedChanges`, the changes the transaction's writes captured (`activity.changes`) replace
   * `detail.changes` when there are any: one statement either way.
   */
  async insert(entry: NewActivityLog): Promise<void> {
    await this.query(
      prepared(`INSERT INTO activity_logs (organization_id, team_id, user_id, api_key_id, is_system, activity, scope,
                                  item_id, detail, ip)
       SELECT coalesce($1::uuid, (SELECT p.organization_id FROM projects p WHERE p.id = $2::int),
                       (SELECT d.organization_id FROM organization_domains d WHERE d.id = $11::uuid)),
              $2::int, $3::int, $4, $5, $6, $7, $8,
              CASE WHEN $12::boolean AND nullif(current_setting('activity.changes', true), '') IS NOT NULL
                   THEN jsonb_set($9::jsonb, '{changes}', current_setting('activity.changes', true)::jsonb)
                   ELSE $9::jsonb END,
              $10::inet`),
      [
        entry.organizationId,
        entry.teamId,
        entry.userId,
        entry.apiKeyId,
        entry.isSystem,
        entry.activity,
        entry.scope,
        entry.itemId,
        JSON.stringify(entry.detail),
        entry.ip,
        entry.domainId ?? null,
        entry.capturedChanges ?? false,
      ],
    );
  }

  /**
   * Inserts the entry of a read through a sharing link (no user, no key): the recording and its project are
   * those the enabled sharing of `accessToken` names; an unknown or disabled token writes nothing (it names
   * nothing). The token itself is never stored. One statement; returns whether an entry was written.
   */
  async insertSharedRead(
    accessToken: string,
    activity: string,
    detail: Record<string, unknown>,
    ip: string | null,
  ): Promise<boolean> {
    const rows = await this.query<{ id: string }>(
      `INSERT INTO activity_logs (organization_id, team_id, user_id, api_key_id, is_system, activity, scope,
                                  item_id, detail, ip)
       SELECT p.organization_id, s.team_id, NULL, NULL, false, $2, 'Replay', left(s.session_id, 200),
              jsonb_set($3::jsonb, '{id}', to_jsonb(s.session_id)), $4::inet
         FROM session_recording_sharing s
         JOIN projects p ON p.id = s.team_id
        WHERE s.access_token = $1 AND s.enabled
       RETURNING id`,
      [accessToken, activity, JSON.stringify(detail), ip],
    );
    return rows.length > 0;
  }

  /**
   * Inserts an entry of a read of the project `teamId` by the user, when the user is a member of the project's
   * organization and the key's restrictions reach the project (a read of an unknown project, of one outside the
   * user's organizations, or outside the key's reach is refused before anything is read: no entry). One
   * statement. Returns whether an entry was written.
   */
  async insertRead(
    entry: NewActivityLog & { teamId: number; userId: number },
    restrictions: { organizations: readonly string[] | null; projects: readonly number[] | null },
  ): Promise<boolean> {
    const rows = await this.query<{ id: string }>(
      prepared(`INSERT INTO activity_logs (organization_id, team_id, user_id, api_key_id, is_system, activity, scope,
                                  item_id, detail, ip)
       SELECT p.organization_id, p.id, $2, $3, false, $4, $5, $6, $7::jsonb, $8::inet
         FROM projects p
         JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $2
        WHERE p.id = $1 AND ($9::uuid[] IS NULL OR p.organization_id = ANY($9::uuid[]))
          AND ($10::int[] IS NULL OR p.id = ANY($10::int[]))
       RETURNING id`),
      [
        entry.teamId,
        entry.userId,
        entry.apiKeyId,
        entry.activity,
        entry.scope,
        entry.itemId,
        JSON.stringify(entry.detail),
        entry.ip,
        restrictions.organizations ? [...restrictions.organizations] : null,
        restrictions.projects ? [...restrictions.projects] : null,
      ],
    );
    return rows.length > 0;
  }

  /**
   * Up to `limit` entries matching `filter` from `cursor` (none: the newest), newest first, with their users.
   */
  async list(
    filter: ActivityLogFilter,
    cursor: ActivityCursor | null,
    limit: number,
  ): Promise<ActivityLogRow[]> {
    const params: unknown[] = [];
    const where = this.conditions(filter, params);
    let order = 'DESC';
    if (cursor) {
      const at = CURSOR_AT.replace('$CURSOR_US', `$${params.push(cursor.atUs)}`);
      const id = `$${params.push(cursor.id)}::uuid`;
      if (cursor.direction === 'before') where.push(`(a.created_at, a.id) < (${at}, ${id})`);
      else {
        where.push(`(a.created_at, a.id) > (${at}, ${id})`);
        order = 'ASC';
      }
    }
    const rows = await this.query<ActivityLogRow>(
      `SELECT ${COLUMNS}
         FROM activity_logs a
         LEFT JOIN users u ON u.id = a.user_id
        WHERE ${where.join(' AND ')}
        ORDER BY a.created_at ${order}, a.id ${order}
        LIMIT $${params.push(limit)}`,
      params,
    );
    return order === 'ASC' ? rows.reverse() : rows;
  }

  private conditions(filter: ActivityLogFilter, params: unknown[]): string[] {
    const where: string[] = [];
    if (filter.teamId !== undefined) where.push(`a.team_id = $${params.push(filter.teamId)}`);
    if (filter.organizationId !== undefined)
      where.push(`a.organization_id = $${params.push(filter.organizationId)}::uuid`);
    if (filter.userUuid !== undefined)
      where.push(`a.user_id = (SELECT id FROM users WHERE uuid = $${params.push(filter.userUuid)}::uuid)`);
    if (filter.scopes?.length) where.push(`a.scope = ANY($${params.push([...filter.scopes])}::text[])`);
    if (filter.hiddenScopes?.length)
      where.push(`a.scope <> ALL($${params.push([...filter.hiddenScopes])}::text[])`);
    if (filter.itemId !== undefined) where.push(`a.item_id = $${params.push(filter.itemId)}`);
    if (filter.from) where.push(`a.created_at >= $${params.push(filter.from)}`);
    if (filter.to) where.push(`a.created_at < $${params.push(filter.to)}`);
    if (!where.length) where.push('true');
    return where;
  }

  /**
   * Deletes up to `batch` entries created before `cutoff` (at least a day ago: the trigger refuses younger ones) in
   * one transaction that tells the trigger the cutoff; returns how many. The cutoff is a `SET LOCAL` (an ISO
   * timestamp, no quote in it) that Citus passes on to the nodes holding the table's copies, where the trigger
   * runs (`citus.propagate_set_commands`, a harmless placeholder setting on plain PostgreSQL); Citus does not pass
   * on a `set_config`.
   */
  pruneBatch(cutoff: Date, batch: number): Promise<number> {
    return this.transaction(async () => {
      await this.query(`SET LOCAL citus.propagate_set_commands TO 'local'`);
      await this.query(`SET LOCAL activity_log.prune_before TO '${cutoff.toISOString()}'`);
      const { affected } = await this.modify(
        `DELETE FROM activity_logs WHERE id IN (
           SELECT id FROM activity_logs WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
        [cutoff, batch],
      );
      return affected;
    });
  }
}
