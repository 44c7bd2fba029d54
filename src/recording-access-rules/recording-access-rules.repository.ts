import { Injectable } from '@nestjs/common';
import type { Page, PageParams } from '../common/pagination/page.js';
import { MembershipLevel } from '../common/vocabulary/membership-level.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import {
  RecordingAccessRuleEntity,
  RecordingAccessRuleRoleEntity,
  type RuleKind,
  type RulePropertyOperator,
} from './recording-access-rule.entity.js';
import { EXAMPLE_VISIBILITY, type HidingRule, type RecordingVisibility } from './recording-visibility.js';

/**
 * SQL fragment, a JSON array of the rules of `project` (an alias of projects) that hide what they match from the
 * user `userId` (an SQL expression, null for no user) whose membership of the project's organization is
 * `membership` (an alias, its columns null when not a member): `[]` for the organization's admins and owners,
 * else the rules naming none of the user's roles, oldest first. Served by the rules' (team_id, …) index and the
 * rule roles' primary key with the role memberships' unique (role_id, user_id) key. Read by `hidingRulesOf`.
 */
export function hidingRulesJsonSql(project: string, membership: string, userId: string): string {
  return `CASE WHEN ${membership}.level >= ${MembershipLevel.ADMIN} THEN '[]'::json
     ELSE COALESCE((SELECT json_agg(json_build_array(ar.kind, ar.url_pattern, ar.property_key,
                                                     ar.property_operator, ar.property_value)
                                    ORDER BY ar.created_at, ar.id)
                      FROM recording_access_rules ar
                     WHERE ar.team_id = ${project}.id
                       AND NOT EXISTS (SELECT 1 FROM recording_access_rule_roles rr
                                         JOIN role_memberships rm ON rm.role_id = rr.role_id
                                        WHERE rr.rule_id = ar.id AND rm.user_id = ${userId})), '[]'::json)
   END`;
}

/** The rules of a `hidingRulesJsonSql` value. */
export function hidingRulesOf(json: unknown): HidingRule[] {
  return (
    (json ?? []) as [RuleKind, string | null, string | null, RulePropertyOperator | null, string | null][]
  ).map(([kind, urlPattern, propertyKey, propertyOperator, propertyValue]) => ({
    kind,
    urlPattern,
    propertyKey,
    propertyOperator,
    propertyValue,
  }));
}

/** The match of a rule: the columns of its kind set, the others null. */
export interface RuleMatch {
  kind: RuleKind;
  urlPattern: string | null;
  propertyKey: string | null;
  propertyOperator: RulePropertyOperator | null;
  propertyValue: string | null;
}

/** A rule with its creator and the ids of its roles. */
export interface RuleWithRoles {
  rule: RecordingAccessRuleEntity;
  roleIds: string[];
}

/**
 * The recording_access_rules table and its roles, owned by this module (docs/data-access.md). The hot statement,
 * `hidingRules` (asked by every read of recordings), is plain SQL pinned with `@GenerateSql`; the API's reads and
 * writes go through TypeORM.
 */
@Injectable()
export class RecordingAccessRulesRepository extends RepositoryBase {
  /**
   * The rules of project `teamId` that hide what they match from user `userId`: none when the user is an admin
   * or owner of the project's organization, else the rules naming none of the user's roles (all of them for a
   * null user). The same SQL as the value the recordings' routes read in the statement of project access
   * (`hidingRulesJsonSql`), for reads without a caller of their own (a shared link's issuer, an export's creator).
   */
  @GenerateSql(
    { params: (f) => [f.projectId, f.userId] },
    { name: 'no user', params: (f) => [f.projectId, null] },
  )
  async hidingRules(teamId: number, userId: number | null): Promise<HidingRule[]> {
    const rows = await this.query<{ hiding: unknown }>(
      `SELECT ${hidingRulesJsonSql('p', 'm', '$2::int')} AS hiding
         FROM projects p
         LEFT JOIN organization_memberships m ON m.organization_id = p.organization_id AND m.user_id = $2::int
        WHERE p.id = $1`,
      [teamId, userId],
    );
    return hidingRulesOf(rows[0]?.hiding);
  }

  /** Whether the project's recording `sessionId` (deleted or not) exists and `visibility` hides it. */
  @GenerateSql({ params: (f) => [f.projectId, f.sessionId, EXAMPLE_VISIBILITY] })
  async hidesSession(teamId: number, sessionId: string, visibility: RecordingVisibility): Promise<boolean> {
    const params: unknown[] = [teamId, sessionId];
    const hidden = visibility.hiddenSessionSql('$1::int', '$2::text', (value) => `$${params.push(value)}`);
    if (!hidden) return false;
    const [row] = await this.query<{ hidden: boolean }>(`SELECT ${hidden} AS hidden`, params);
    return row.hidden;
  }

  /** A page of the project's rules, oldest first, with their creators and roles. */
  async pageForProject(teamId: number, { limit, offset }: PageParams): Promise<Page<RuleWithRoles>> {
    const [rules, total] = await this.repository(RecordingAccessRuleEntity).findAndCount({
      where: { teamId },
      relations: { createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items: await this.withRoles(rules), total };
  }

  /** Holds the project's rules against concurrent creation until the caller's transaction ends. */
  async lockProjectRules(teamId: number): Promise<void> {
    await this.query(`SELECT pg_advisory_xact_lock(hashtextextended('recording-access-rules:' || $1, 0))`, [
      String(teamId),
    ]);
  }

  /** How many rules the project has. */
  countForProject(teamId: number): Promise<number> {
    return this.repository(RecordingAccessRuleEntity).count({ where: { teamId } });
  }

  /** The rule when it belongs to the project, with its creator and roles. */
  async findInProject(teamId: number, id: string): Promise<RuleWithRoles | null> {
    const rule = await this.repository(RecordingAccessRuleEntity).findOne({
      where: { id, teamId },
      relations: { createdBy: true },
    });
    return rule ? (await this.withRoles([rule]))[0] : null;
  }

  /** The rule when it belongs to the project, locked for update until the caller's transaction ends. */
  lockInProject(teamId: number, id: string): Promise<RecordingAccessRuleEntity | null> {
    return this.repository(RecordingAccessRuleEntity).findOne({
      where: { id, teamId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** Which of these role ids are roles of the organization. */
  async roleIdsInOrganization(organizationId: string, roleIds: readonly string[]): Promise<Set<string>> {
    if (!roleIds.length) return new Set();
    const rows = await this.query<{ id: string }>(
      `SELECT id::text AS id FROM roles WHERE organization_id = $1 AND id = ANY($2::uuid[])`,
      [organizationId, roleIds],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Inserts a rule and its roles (in the caller's transaction); returns its id. */
  async insert(
    teamId: number,
    match: RuleMatch,
    roleIds: readonly string[],
    createdById: number,
    now: Date,
  ): Promise<string> {
    const { identifiers } = await this.repository(RecordingAccessRuleEntity).insert({
      teamId,
      ...match,
      createdById,
      createdAt: now,
      updatedAt: now,
    });
    const id = (identifiers[0] as { id: string }).id;
    await this.setRoles(id, roleIds);
    return id;
  }

  /** Replaces a rule's match, and its roles when `roleIds` is given (in the caller's transaction). */
  async update(
    id: string,
    match: RuleMatch,
    roleIds: readonly string[] | undefined,
    now: Date,
  ): Promise<void> {
    await this.repository(RecordingAccessRuleEntity).update({ id }, { ...match, updatedAt: now });
    if (roleIds !== undefined) {
      await this.repository(RecordingAccessRuleRoleEntity).delete({ ruleId: id });
      await this.setRoles(id, roleIds);
    }
  }

  /** Deletes the rule when it belongs to the project (its roles go with it); returns whether it did. */
  async delete(teamId: number, id: string): Promise<boolean> {
    const result = await this.repository(RecordingAccessRuleEntity).delete({ id, teamId });
    return (result.affected ?? 0) > 0;
  }

  private async setRoles(ruleId: string, roleIds: readonly string[]): Promise<void> {
    if (!roleIds.length) return;
    await this.repository(RecordingAccessRuleRoleEntity).insert(
      roleIds.map((roleId) => ({ ruleId, roleId })),
    );
  }

  /** The rules with the ids of their roles (one query for all of them), in role id order. */
  private async withRoles(rules: RecordingAccessRuleEntity[]): Promise<RuleWithRoles[]> {
    if (!rules.length) return [];
    const rows = await this.repository(RecordingAccessRuleRoleEntity)
      .createQueryBuilder('rr')
      .where('rr.ruleId IN (:...ids)', { ids: rules.map((r) => r.id) })
      .orderBy('rr.roleId', 'ASC')
      .getMany();
    const byRule = new Map<string, string[]>();
    for (const row of rows) byRule.set(row.ruleId, [...(byRule.get(row.ruleId) ?? []), row.roleId]);
    return rules.map((rule) => ({ rule, roleIds: byRule.get(rule.id) ?? [] }));
  }
}
