import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { EntityColumns } from '../../src/database/entity-columns.js';
import { OrganizationEntity } from '../../src/organizations/organization.entity.js';
import { ProjectEntity } from '../../src/projects/project.entity.js';
import { scratchDataSource } from '../support/scratch-data-source.js';

describe('EntityColumns', () => {
  let scratch: Awaited<ReturnType<typeof scratchDataSource>>;
  let dataSource: DataSource;

  beforeAll(async () => {
    scratch = await scratchDataSource();
    dataSource = scratch.dataSource;
  });

  afterAll(async () => {
    await scratch?.close();
  });

  it('selects every column of the entity and hydrates the same entity TypeORM loads', async () => {
    const organization = await dataSource.getRepository(OrganizationEntity).save({
      name: 'Acme',
      slug: `acme-${Date.now()}`,
      logoMediaId: null,
    });
    const saved = await dataSource.getRepository(ProjectEntity).save({
      organizationId: organization.id,
      name: 'Web',
      apiToken: `phc_${Date.now()}`,
      secretApiToken: `phs_${Date.now()}`,
    });
    const columns = EntityColumns.of(dataSource, ProjectEntity);
    expect(columns.select('p')).toBe(
      'p.id, p.uuid, p.organization_id, p.name, p.api_token, p.secret_api_token, p.secret_api_token_backup, ' +
        'p.timezone, p.session_recording_opt_in, ' +
        'p.session_recording_retention_period_days, p.events_retention_period_days, p.ingested_event, p.anonymize_ips, ' +
        'p.autocapture_opt_out, p.autocapture_exceptions_opt_in, p.capture_console_log_opt_in, ' +
        'p.capture_performance_opt_in, p.heatmaps_opt_in, p.default_experiment_stats_method, p.created_at, ' +
        'p.updated_at, p.deleted_at',
    );
    const [row] = await dataSource.query(`SELECT ${columns.select('p')} FROM projects p WHERE p.id = $1`, [
      saved.id,
    ]);
    const hydrated = columns.hydrate(row);
    const loaded = await dataSource.getRepository(ProjectEntity).findOneByOrFail({ id: saved.id });
    expect(hydrated).toBeInstanceOf(ProjectEntity);
    expect(hydrated).toEqual(loaded);
    expect(hydrated.createdAt).toBeInstanceOf(Date);
    expect(hydrated.sessionRecordingOptIn).toBe(true);

    const org = EntityColumns.of(dataSource, OrganizationEntity);
    const [orgRow] = await dataSource.query(
      `SELECT ${org.select('o')} FROM organizations o WHERE o.id = $1`,
      [organization.id],
    );
    expect(org.hydrate(orgRow)).toEqual(
      await dataSource.getRepository(OrganizationEntity).findOneByOrFail({ id: organization.id }),
    );
  });

  it('is built once per entity', () => {
    expect(EntityColumns.of(dataSource, ProjectEntity)).toBe(EntityColumns.of(dataSource, ProjectEntity));
  });
});
