import { Injectable } from '@nestjs/common';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Page, PageParams } from '../common/pagination/page.js';
import { GenerateSql } from '../database/generate-sql.js';
import { RepositoryBase } from '../database/repository-base.js';
import { ProjectSecretApiKeyEntity } from './project-secret-api-key.entity.js';

/** What the guard needs of a project secret API key to authenticate a request. */
export interface ProjectSecretKeyCredential {
  id: string;
  projectId: number;
  organizationId: string;
  scopes: string[];
  lastUsedAt: Date | null;
}

/** The fields a new key is made of. */
export type NewProjectSecretApiKey = Pick<
  ProjectSecretApiKeyEntity,
  'projectId' | 'label' | 'secureValue' | 'maskValue' | 'scopes' | 'createdById'
>;

/** Why a key was not inserted. */
export type InsertRefusal = 'full' | 'label_taken';

const LABEL_KEY = 'project_secret_api_keys_project_label_key';
const KEY_ID = '00000000-0000-4000-8000-000000000001';
const AT = new Date('2026-11-21T10:00:00.000Z');

/** The project_secret_api_keys table, owned by this module (docs/data-access.md). */
@Injectable()
export class ProjectSecretApiKeysRepository extends RepositoryBase {
  /**
   * The key with this digest, with its project's organization: one indexed lookup per request that presents a
   * `phs_` secret, in plain SQL.
   */
  @GenerateSql({ params: ['0'.repeat(64)] })
  async findByDigest(digest: string): Promise<ProjectSecretKeyCredential | null> {
    const rows = await this.query<{
      id: string;
      project_id: number;
      organization_id: string;
      scopes: string[];
      last_used_at: Date | null;
    }>(
      `SELECT k.id, k.project_id, p.organization_id, k.scopes, k.last_used_at
         FROM project_secret_api_keys k JOIN projects p ON p.id = k.project_id
        WHERE k.secure_value = $1`,
      [digest],
    );
    const row = rows[0];
    return row
      ? {
          id: row.id,
          projectId: row.project_id,
          organizationId: row.organization_id,
          scopes: row.scopes,
          lastUsedAt: row.last_used_at,
        }
      : null;
  }

  /** Stamps the key's last use, unless already stamped within the hour (at most hourly writes). */
  @GenerateSql({ params: [KEY_ID, AT] })
  async touch(id: string, now: Date): Promise<void> {
    await this.query(
      `UPDATE project_secret_api_keys SET last_used_at = $2
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - interval '1 hour')`,
      [id, now],
    );
  }

  /** A page of the project's keys with their creators, oldest first. */
  async pageForProject(
    projectId: number,
    { limit, offset }: PageParams,
  ): Promise<Page<ProjectSecretApiKeyEntity>> {
    const [items, total] = await this.repository(ProjectSecretApiKeyEntity).findAndCount({
      where: { projectId },
      relations: { createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }

  /** The key with its creator, when it belongs to the project (any project with `projectId` null). */
  findWithCreator(projectId: number | null, id: string): Promise<ProjectSecretApiKeyEntity | null> {
    return this.repository(ProjectSecretApiKeyEntity).findOne({
      where: projectId === null ? { id } : { id, projectId },
      relations: { createdBy: true },
    });
  }

  /**
   * Inserts the key unless the project has `max` keys already or one with the same label: under a transaction
   * lock of the project's keys, so concurrent creations cannot pass the bound together.
   */
  insertBounded(
    fields: NewProjectSecretApiKey,
    max: number,
  ): Promise<ProjectSecretApiKeyEntity | InsertRefusal> {
    return this.transaction(async () => {
      await this.query(
        `SELECT pg_advisory_xact_lock(hashtextextended('project-secret-api-keys:' || $1, 0))`,
        [fields.projectId],
      );
      const repository = this.repository(ProjectSecretApiKeyEntity);
      if ((await repository.countBy({ projectId: fields.projectId })) >= max) return 'full';
      if (await repository.existsBy({ projectId: fields.projectId, label: fields.label }))
        return 'label_taken';
      return repository.save(repository.create(fields), { transaction: false, reload: true });
    });
  }

  /** Sets the label and scopes given; 'label_taken' when another key of the project has the label. */
  async update(
    id: string,
    fields: Partial<Pick<ProjectSecretApiKeyEntity, 'label' | 'scopes'>>,
  ): Promise<InsertRefusal | null> {
    if (fields.label === undefined && fields.scopes === undefined) return null;
    try {
      await this.repository(ProjectSecretApiKeyEntity).update({ id }, fields);
      return null;
    } catch (error) {
      if (isUniqueViolation(error, LABEL_KEY)) return 'label_taken';
      throw error;
    }
  }

  /** Replaces the key's secret (the old one stops working at once) and stamps `last_rolled_at`. */
  async roll(id: string, secureValue: string, maskValue: string, now: Date): Promise<boolean> {
    const result = await this.repository(ProjectSecretApiKeyEntity).update(
      { id },
      { secureValue, maskValue, lastRolledAt: now },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Deletes the key (of the project, or any with `projectId` null); returns whether it did. */
  async delete(projectId: number | null, id: string): Promise<boolean> {
    const result = await this.repository(ProjectSecretApiKeyEntity).delete(
      projectId === null ? { id } : { id, projectId },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Every key of the project, oldest first (at most the bound of keys a project may have). */
  listForProject(projectId: number): Promise<ProjectSecretApiKeyEntity[]> {
    return this.repository(ProjectSecretApiKeyEntity).find({
      where: { projectId },
      relations: { createdBy: true },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }
}
