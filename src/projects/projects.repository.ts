import { Injectable } from '@nestjs/common';
import { In, IsNull } from 'typeorm';
import type { Page, PageParams } from '../common/pagination/page.js';
import { EntityColumns } from '../database/entity-columns.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { prepared, type PreparedSql } from '../database/prepared-sql.js';
import type { MembershipWithRules } from '../memberships/memberships.service.js';
import { accessRulesJsonSql, accessRulesOf, projectVisibleSql } from '../memberships/memberships.sql.js';
import { ProjectEntity } from './project.entity.js';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';

/** A project as listed inside its organization (an Organization's `teams`). */
export interface ProjectSummary {
  id: number;
  uuid: string;
  organizationId: string;
  apiToken: string;
  name: string;
  timezone: string;
}

/**
 * SQL fragment for queries of other modules: the projects of `organization` (an SQL expression) that the member
 * `membership` (an alias of organization_memberships) may see, as a JSON array of ProjectSummary, by id, deleted ones left out; `[]`
 * when none. A correlated subquery (an index scan on organization_id), so a page of organizations reads its
 * projects in the same statement.
 */
export function projectSummariesJsonSql(organization: string, membership: string): string {
  return `COALESCE((SELECT json_agg(json_build_object('id', p.id, 'uuid', p.uuid, 'organizationId', p.organization_id,
                                      'apiToken', p.api_token, 'name', p.name, 'timezone', p.timezone)
                    ORDER BY p.id)
                FROM projects p WHERE p.organization_id = ${organization} AND p.deleted_at IS NULL
                 AND ${projectVisibleSql('p', membership)}), '[]'::json)`;
}

/**
 * SQL fragment for queries of other modules: the days the recordings of `project` (an alias of `projects`) are
 * kept, its own `session_recording_retention_period_days` or else `defaultDays` (an SQL expression, such as a
 * parameter carrying RECORDING_RETENTION_DAYS).
 */
export function recordingRetentionDaysSql(project: string, defaultDays: string): string {
  return `coalesce(${project}.session_recording_retention_period_days, ${defaultDays})`;
}

/**
 * A value another feature reads in the statement of project access (`findWithAccess`), so what it needs to know
 * about the caller in the project costs no statement of its own: `sql` renders it from the aliases of the project
 * row, of the caller's membership of its organization (null columns when not a member) and the caller's user id
 * (SQL expressions). It reads its own tables; this module only places it in the statement.
 */
export interface AccessJoin {
  sql(project: string, membership: string, userId: string): string;
}

/** An AccessJoin for the pinned SQL: the number of the project's members. */
const EXAMPLE_JOIN: AccessJoin = {
  sql: (project) =>
    `(SELECT count(*) FROM organization_memberships x WHERE x.organization_id = ${project}.organization_id)`,
};

/** The key of `findWithAccess`'s statement without a join. */
const NO_JOIN: AccessJoin = { sql: () => '' };

/** The settings a new project may be given; those left undefined take their defaults. */
export type NewProject = Pick<ProjectEntity, 'organizationId' | 'name' | 'apiToken' | 'secretApiToken'> &
  Partial<ProjectSettings>;

/** The settings of a project its admins change (`PATCH`), and may give a new one (`POST`). */
export type ProjectSettings = Pick<
  ProjectEntity,
  | 'name'
  | 'sessionRecordingOptIn'
  | 'sessionRecordingRetentionPeriodDays'
  | 'anonymizeIps'
  | 'autocaptureOptOut'
  | 'autocaptureExceptionsOptIn'
  | 'captureConsoleLogOptIn'
  | 'capturePerformanceOptIn'
  | 'heatmapsOptIn'
  | 'eventsRetentionPeriodDays'
  | 'defaultExperimentStatsMethod'
>;

/** The fields of `fields` that are not undefined (an undefined field is left alone, or takes its default). */
const definedOnly = <T extends object>(fields: T): Partial<T> =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;

@Injectable()
export class ProjectsRepository extends RepositoryBase {
  /** `findWithAccess`'s statements, by join (NO_JOIN: none); weak, so a join made per call is not kept. */
  private readonly withAccessStatements = new WeakMap<AccessJoin, PreparedSql>();

  private get columns(): EntityColumns<ProjectEntity> {
    return EntityColumns.of(this.dataSource, ProjectEntity);
  }

  /**
   * Inserts a project of the organization; the settings left undefined take their column defaults, but for
   * `anonymizeIps`, which takes the organization's `default_anonymize_ips` (as PostHog's new teams do). Null when
   * the organization does not exist (any more).
   */
  async create(fields: NewProject): Promise<ProjectEntity | null> {
    const [organization] = await this.query<{ anonymize: boolean }>(
      'SELECT default_anonymize_ips AS anonymize FROM organizations WHERE id = $1',
      [fields.organizationId],
    );
    if (!organization) return null;
    const repo = this.repository(ProjectEntity);
    return repo.save(repo.create({ anonymizeIps: organization.anonymize, ...definedOnly(fields) }));
  }

  /**
   * Every project-scoped request starts here: plain SQL (the columns and the mapping come from the entity),
   * without the ORM's query building. A deleted project is not found, here and in every read of this class.
   */
  @GenerateSql({ params: [1] })
  findById(id: number): Promise<ProjectEntity | null> {
    return this.findOneWhere('id = $1', id);
  }

  /**
   * The project, the user's membership of its organization (null when not a member), the access rules of the
   * project that apply to the user and (with `join`) another feature's value about the user in the project (its
   * `joined`, as the database answers it), in one statement: what every project-scoped request starts with
   * (`ProjectsService.requireAccessible`), so access rules cost no query of their own.
   */
  @GenerateSql({ params: [1, 1] }, { name: 'with a joined value', params: [1, 1, EXAMPLE_JOIN] })
  async findWithAccess(
    id: number,
    userId: number,
    join?: AccessJoin,
  ): Promise<{ project: ProjectEntity; membership: MembershipWithRules | null; joined: unknown } | null> {
    const rows = await this.rows<Record<string, unknown>>(this.withAccessSql(join), [id, userId]);
    if (!rows.length) return null;
    const row = rows[0];
    return {
      project: this.columns.hydrate(row),
      membership:
        row.access_membership_id === null
          ? null
          : {
              id: row.access_membership_id as string,
              level: row.access_membership_level as number,
              rules: accessRulesOf(row.access_rules),
            },
      joined: row.access_joined,
    };
  }

  /**
   * The statement of `findWithAccess`, built once per `join` (a feature's, usually one object for the process) and
   * prepared: a few texts, each planned once per connection.
   */
  private withAccessSql(join: AccessJoin | undefined): PreparedSql {
    const key = join ?? NO_JOIN;
    let statement = this.withAccessStatements.get(key);
    if (!statement) {
      const joined = join ? `,\n              ${join.sql('p', 'm', '$2::int')} AS access_joined` : '';
      statement =
        prepared(`SELECT ${this.columns.select('p')}, m.id AS access_membership_id, m.level AS access_membership_level,
              ${accessRulesJsonSql('p', 'm')} AS access_rules${joined}
         FROM projects p
         LEFT JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $2
        WHERE p.id = $1 AND p.deleted_at IS NULL`);
      this.withAccessStatements.set(key, statement);
    }
    return statement;
  }

  /** The project of a capture token (every capture request): plain SQL, as `findById`. */
  @GenerateSql({ params: ['phc_example'] })
  findByApiToken(apiToken: string): Promise<ProjectEntity | null> {
    return this.findOneWhere('api_token = $1', apiToken);
  }

  /**
   * The project of a secret API token (`phs_…`), current or backup: an exact match on either unique column (an
   * index lookup each), never a scan comparing secrets.
   */
  @GenerateSql({ params: ['phs_example'] })
  findBySecretToken(secret: string): Promise<ProjectEntity | null> {
    return this.findOneWhere('(secret_api_token = $1 OR secret_api_token_backup = $1)', secret);
  }

  /**
   * Marks the project deleted (hidden from every read from the commit on); its capture token, for the token
   * cache to forget, or null when there is no such project or it was already deleted.
   */
  @GenerateSql({ params: [1] })
  async markDeleted(id: number): Promise<string | null> {
    const rows = await this.rows<{ api_token: string }>(
      `UPDATE projects SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING api_token`,
      [id],
    );
    return rows[0]?.api_token ?? null;
  }

  /** Whether a deleted project waits for its data to be removed (an index scan of the pending ones). */
  @GenerateSql()
  async hasPendingDeletion(): Promise<boolean> {
    const rows = await this.query('SELECT 1 FROM projects WHERE deleted_at IS NOT NULL LIMIT 1');
    return rows.length > 0;
  }

  /** The deleted project waiting longest for its data to be removed, but for those `skipped`; null when none. */
  @GenerateSql({ params: [[]] })
  async nextPendingDeletion(skipped: readonly number[]): Promise<number | null> {
    const rows = await this.query<{ id: number }>(
      `SELECT id FROM projects WHERE deleted_at IS NOT NULL AND id <> ALL($1::int[])
        ORDER BY deleted_at, id LIMIT 1`,
      [skipped],
    );
    return rows[0]?.id ?? null;
  }

  /**
   * Deletes the row of a deleted project, once its features removed their data; what is left of it (rows no
   * feature removes itself) goes with it (ON DELETE CASCADE). Whether it was there.
   */
  @GenerateSql({ params: [2147483647] })
  async removeDeleted(id: number): Promise<boolean> {
    const { affected } = await this.modify('DELETE FROM projects WHERE id = $1 AND deleted_at IS NOT NULL', [
      id,
    ]);
    return affected > 0;
  }

  /**
   * Moves the secret token to the backup and stores `next` as the current one, in one UPDATE (two concurrent
   * rotations each move the token the other wrote). The row after it, or null when it no longer exists.
   */
  @GenerateSql({ params: [1, 'phs_next'] })
  async rotateSecretToken(id: number, next: string): Promise<ProjectEntity | null> {
    await this.rows(
      `UPDATE projects SET secret_api_token_backup = secret_api_token, secret_api_token = $2, updated_at = now()
        WHERE id = $1 AND deleted_at IS NULL`,
      [id, next],
    );
    return this.findById(id);
  }

  private async findOneWhere(condition: string, value: unknown): Promise<ProjectEntity | null> {
    const rows = await this.rows<Record<string, unknown>>(
      `SELECT ${this.columns.select('projects')} FROM projects WHERE ${condition} AND deleted_at IS NULL`,
      [value],
    );
    return rows.length ? this.columns.hydrate(rows[0]) : null;
  }

  /**
   * Writes only the given columns (undefined: left alone; null is written), in one UPDATE, so concurrent changes
   * of different fields never undo each other. Returns the row as it is after the update, or null when it no
   * longer exists.
   */
  async update(id: number, fields: Partial<ProjectSettings>): Promise<ProjectEntity | null> {
    const changes = definedOnly(fields);
    if (Object.keys(changes).length) {
      await this.repository(ProjectEntity).update({ id, deletedAt: IsNull() }, changes);
    }
    return this.findById(id);
  }

  /**
   * The projects of an organization that the user may see (access rules: `projectVisibleSql`), by id (the first
   * one is the default project), among `onlyIds` when given.
   */
  @GenerateSql(
    { name: 'all', params: [ORGANIZATION, 1, null, { limit: 100, offset: 0 }] },
    { name: 'some', params: [ORGANIZATION, 1, [1, 2], { limit: 100, offset: 0 }] },
  )
  async pageForOrganization(
    organizationId: string,
    userId: number,
    onlyIds: readonly number[] | null,
    { limit, offset }: PageParams,
  ): Promise<Page<{ project: ProjectEntity; membership: MembershipWithRules }>> {
    const from = `FROM projects p
         JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $2
        WHERE p.organization_id = $1 AND p.deleted_at IS NULL
          AND ($3::bigint[] IS NULL OR p.id = ANY($3::bigint[]))
          AND ${projectVisibleSql('p', 'm')}`;
    const params = [organizationId, userId, onlyIds];
    const [rows, count] = await Promise.all([
      this.query<Record<string, unknown>>(
        `SELECT ${this.columns.select('p')}, m.id AS access_membership_id, m.level AS access_membership_level,
                ${accessRulesJsonSql('p', 'm')} AS access_rules
           ${from} ORDER BY p.id LIMIT $4 OFFSET $5`,
        [...params, limit, offset],
      ),
      this.query<{ total: number }>(`SELECT count(*)::int AS total ${from}`, params),
    ]);
    return {
      items: rows.map((row) => ({
        project: this.columns.hydrate(row),
        membership: {
          id: row.access_membership_id as string,
          level: row.access_membership_level as number,
          rules: accessRulesOf(row.access_rules),
        },
      })),
      total: count[0].total,
    };
  }

  /** Which of these project ids belong to the organization. */
  async idsInOrganization(organizationId: string, ids: readonly number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    const rows = await this.repository(ProjectEntity).find({
      select: { id: true },
      where: { organizationId, id: In([...ids]), deletedAt: IsNull() },
    });
    return new Set(rows.map((r) => r.id));
  }

  /**
   * The organization's first project (lowest id), optionally among some ids only, and (with `userId`) among
   * those the user may see.
   */
  @GenerateSql(
    { params: [ORGANIZATION] },
    { name: 'among some', params: [ORGANIZATION, [1, 2]] },
    { name: 'visible to a user', params: [ORGANIZATION, null, 1] },
  )
  async findDefault(
    organizationId: string,
    onlyIds: readonly number[] | null = null,
    userId: number | null = null,
  ): Promise<ProjectEntity | null> {
    const rows = await this.query<Record<string, unknown>>(
      `SELECT ${this.columns.select('p')} FROM projects p
         LEFT JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $3
        WHERE p.organization_id = $1 AND p.deleted_at IS NULL
          AND ($2::bigint[] IS NULL OR p.id = ANY($2::bigint[]))
          AND ($3::int IS NULL OR ${projectVisibleSql('p', 'm')})
        ORDER BY p.id LIMIT 1`,
      [organizationId, onlyIds, userId],
    );
    return rows.length ? this.columns.hydrate(rows[0]) : null;
  }
}
