import { ModulesContainer } from '@nestjs/core';
import type { Logger } from 'typeorm';
import { generatedSqlMethods, type SqlFixture } from '../../src/database/generate-sql.js';
import { RepositoryBase } from '../../src/database/repository-base.js';
import { runInTransaction } from '../../src/database/transactions.js';
import type { TestApp } from './create-test-app.js';
import { rr, snapshotEvent } from './recordings.js';

/**
 * The example calls of every repository method marked `@GenerateSql` (src/database/generate-sql.ts) and the
 * statements each sends: the SQL snapshot test (test/sql/generate-sql.spec.ts) pins their text; the Citus routing
 * test (test/database/citus-routing.spec.ts) plans them on a cluster.
 */

const TRANSACTION_CONTROL = /^(START TRANSACTION|BEGIN|COMMIT|ROLLBACK)$/i;

class RolledBack extends Error {}

/** One statement a call sent, with its parameters. */
export interface RecordedStatement {
  sql: string;
  params: unknown[];
}

/** One example call of a `@GenerateSql` method. */
export interface GeneratedSqlCall {
  className: string;
  method: string;
  /** `Class.method`, with the example's name when it has one. */
  title: string;
  run: () => Promise<unknown>;
}

/** The rows the examples' statements need (a user, an organization, a recording, an export with a running run). */
export async function createSqlFixture(t: TestApp): Promise<SqlFixture> {
  const owner = await t.factories.user({ email: 'sql-owner@example.com' });
  const organization = await t.factories.organization(owner, 'SQL');
  const [project] = (organization as unknown as { teams: { id: number; api_token: string }[] }).teams;
  const sessionId = 'sql-session';
  const at = Date.parse('2026-11-21T10:00:00.000Z');
  await t.http
    .post('/s/')
    .send([
      snapshotEvent({ token: project.api_token, sessionId, events: [rr.meta(at, 'https://example.com/')] }),
    ])
    .expect(200);
  const sharing = (
    await t.http
      .patch(`/api/projects/${project.id}/session_recordings/${sessionId}/sharing`)
      .set(owner.auth)
      .send({ enabled: true })
      .expect(200)
  ).body as { access_token: string };
  const batchExport = (
    await t.http
      .post(`/api/organizations/${organization.id}/batch_exports`)
      .set(owner.auth)
      .send({ name: 'SQL', model: 'persons', interval: 'hour', destination: { type: 'NoOp', config: {} } })
      .expect(201)
  ).body as { id: string };
  await t.http
    .post(`/api/organizations/${organization.id}/batch_exports/${batchExport.id}/backfill`)
    .set(owner.auth)
    .send({ start_at: '2026-11-21T08:00:00.000Z', end_at: '2026-11-21T09:00:00.000Z' })
    .expect(200);
  // The run is taken as running (its job stays queued), so the run lifecycle's statements find it.
  const [run] = (await t.dataSource.query(
    `UPDATE batch_export_runs SET status = 'Running' WHERE batch_export_id = $1 RETURNING id`,
    [batchExport.id],
  )) as { id: string }[][];
  return {
    userId: owner.id,
    userUuid: owner.uuid,
    organizationId: organization.id,
    projectId: project.id,
    sessionId,
    accessToken: sharing.access_token,
    batchExportId: batchExport.id,
    runId: run[0].id,
  };
}

/**
 * Records the statements the app's data source sends: `statementsOf(run)` runs `run` in a transaction rolled back
 * afterwards and returns what it sent, without the transaction's own control statements.
 */
export function statementRecorder(t: TestApp): {
  statementsOf: (run: () => Promise<unknown>) => Promise<RecordedStatement[]>;
} {
  let recording: RecordedStatement[] | null = null;
  const original = t.dataSource.logger;
  const recorder: Logger = {
    ...original,
    logQuery: (query: string, parameters?: unknown[]) => {
      recording?.push({ sql: query, params: parameters ?? [] });
    },
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: () => undefined,
    log: () => undefined,
  };
  t.dataSource.logger = recorder;
  return {
    statementsOf: async (run) => {
      const statements: RecordedStatement[] = [];
      recording = statements;
      try {
        await runInTransaction(t.dataSource, async () => {
          await run();
          throw new RolledBack();
        });
      } catch (error) {
        if (!(error instanceof RolledBack)) throw error;
      } finally {
        recording = null;
      }
      return statements.filter((s) => !TRANSACTION_CONTROL.test(s.sql.trim()));
    },
  };
}

/** Every example call of every `@GenerateSql` method of the app's repositories, by repository. */
export function generatedSqlCalls(t: TestApp, fixture: SqlFixture): Map<string, GeneratedSqlCall[]> {
  const byClass = new Map<string, GeneratedSqlCall[]>();
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.providers.values()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!(instance instanceof RepositoryBase) || !wrapper.metatype) continue;
      const className = (wrapper.metatype as { name: string }).name;
      const calls: GeneratedSqlCall[] = [];
      for (const { method, examples } of generatedSqlMethods(wrapper.metatype)) {
        for (const example of examples) {
          const fn = instance[method] as (...args: unknown[]) => Promise<unknown>;
          const params = typeof example.params === 'function' ? example.params(fixture) : example.params;
          calls.push({
            className,
            method,
            title: example.name ? `${className}.${method} (${example.name})` : `${className}.${method}`,
            run: () => fn.apply(instance, params),
          });
        }
      }
      if (calls.length) byClass.set(className, calls);
    }
  }
  return byClass;
}
