import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';

/** Bumped whenever the seed below changes, so an older seeded database is rebuilt. */
export const SEED_VERSION = '4';

export const SEED = {
  /** Organizations the caller belongs to (the organization list scenario pages through them). */
  callerOrganizations: 200,
  /** Organizations of other users only (rows the caller's queries must skip). */
  otherOrganizations: 1000,
  /** Other members per organization (member_count is this + 1 in the caller's). */
  membersPerOrganization: 4,
  users: 1000,
  exports: 200,
  runsPerExport: 10,
  schedulerExports: 100_000,
  recordings: 1_000_000,
  persons: 100_000,
} as const;

/** What the scenarios need to know about the seeded rows. */
export interface Fixture {
  fingerprint: string;
  /** The caller's key: a plain member of half of their organizations, subject to access rules there. */
  apiKey: string;
  userId: number;
  /**
   * The key of a second caller, owner of the same 200 organizations, whom no access rule limits: the read
   * scenarios' variant without access controls (as every read ran before them).
   */
  ownerApiKey: string;
  retrieveOrganizationId: string;
  exportsOrganizationId: string;
  invitesOrganizationId: string;
  schedulerOrganizationId: string;
  recordings: { projectId: number; recordingId: string; count: number } | null;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A personal API key secret of the service's format (`phx_` + 43 base62 characters). */
function newSecret(): string {
  const bytes = randomBytes(64);
  let out = 'phx_';
  for (let i = 0; out.length < 47; i++) {
    if (bytes[i] < 248) out += BASE62[bytes[i] % 62];
  }
  return out;
}

const ORG = `(SELECT id, created_at, substr(slug, 11)::int AS n FROM organizations WHERE slug LIKE 'bench-org-%')`;

async function orgId(c: pg.ClientBase, n: number): Promise<string> {
  return (await c.query<{ id: string }>('SELECT id FROM organizations WHERE slug = $1', [`bench-org-${n}`]))
    .rows[0].id;
}

async function projectOf(c: pg.ClientBase, organizationId: string): Promise<number> {
  return (
    await c.query<{ id: number }>('SELECT id FROM projects WHERE organization_id = $1', [organizationId])
  ).rows[0].id;
}

/**
 * Seeds the bench database with set-based statements (`INSERT … SELECT generate_series(…)`): the caller in
 * 200 of 1,200 organizations (4 other members and one project each), 200 batch exports × 10 runs in one of
 * them, 100,000 more exports (not yet due; the scheduler scenario makes them due) in an organization of their
 * own, and — when the schema has session recordings — 1,000,000 recordings of 100,000 persons in one project.
 */
export async function seed(
  c: pg.ClientBase,
  fingerprint: string,
  hasRecordings: boolean,
  log: (m: string) => void,
): Promise<Fixture> {
  const secret = newSecret();
  const step = async (what: string, sql: string, params: unknown[] = []) => {
    const started = Date.now();
    const result = await c.query(sql, params);
    log(`seed: ${what}: ${result.rowCount ?? 0} rows in ${Date.now() - started} ms`);
  };
  await c.query('BEGIN');
  await step(
    'users',
    `INSERT INTO users (email, distinct_id, first_name, last_name, is_email_verified)
     SELECT format('bench-user-%s@bench.example', g), format('bench-distinct-%s', g), 'Bench', format('User %s', g), true
       FROM generate_series(0, $1::int) g`,
    [SEED.users],
  );
  const userId = (
    await c.query<{ id: number }>(`SELECT id FROM users WHERE email = 'bench-user-0@bench.example'`)
  ).rows[0].id;
  const organizations = SEED.callerOrganizations + SEED.otherOrganizations;
  await step(
    'organizations',
    `INSERT INTO organizations (name, slug, created_at, updated_at)
     SELECT format('Bench organization %s', g), format('bench-org-%s', g),
            timestamptz '2026-01-01T00:00:00Z' + g * interval '1 minute',
            timestamptz '2026-01-01T00:00:00Z' + g * interval '1 minute'
       FROM generate_series(0, $1::int) g`,
    [organizations], // the last one (n = organizations) holds the scheduler's exports
  );
  await step(
    'projects',
    `INSERT INTO projects (organization_id, name, api_token, secret_api_token, created_at)
     SELECT o.id, 'Default project', format('phc_bench_%s', o.n), format('phs_bench_%s', o.n), o.created_at
       FROM ${ORG} o`,
  );
  await step(
    'caller memberships',
    `INSERT INTO organization_memberships (organization_id, user_id, level, joined_at, updated_at)
     SELECT o.id, $1, 15, o.created_at, o.created_at FROM ${ORG} o WHERE o.n < $2`,
    [userId, SEED.callerOrganizations],
  );
  await step(
    'other memberships',
    `INSERT INTO organization_memberships (organization_id, user_id, level, joined_at, updated_at)
     SELECT o.id, u.id, CASE WHEN j = 0 AND o.n >= $3 THEN 15 ELSE 1 END,
            o.created_at + (j + 1) * interval '1 hour', o.created_at + (j + 1) * interval '1 hour'
       FROM ${ORG} o
       CROSS JOIN generate_series(0, $1::int - 1) j
       JOIN users u ON u.email = format('bench-user-%s@bench.example', 1 + (o.n * $1::int + j) % $2::int)`,
    [SEED.membersPerOrganization, SEED.users, SEED.callerOrganizations],
  );
  await step(
    'api key',
    `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, last_used_at)
     VALUES ($1, 'bench', $2, $3, ARRAY['*'], now())`,
    [userId, createHash('sha256').update(secret).digest('hex'), `phx_...${secret.slice(-4)}`],
  );

  const exportsOrganizationId = await orgId(c, 0);
  await step(
    'batch exports',
    `INSERT INTO batch_exports (organization_id, team_id, name, model, destination_type, destination_config,
                                destination_secrets, interval, paused, hogql_query, scheduled_through, created_at,
                                last_updated_at)
     SELECT $1, $2, format('Bench export %s', g), 'events', 'S3',
            jsonb_build_object('bucket_name', 'bench-bucket', 'region', 'eu-west-1', 'prefix', format('exports/%s/', g),
                               'file_format', 'Parquet'),
            jsonb_build_object('aws_access_key_id', 'AKIABENCH', 'aws_secret_access_key', 'bench-secret'),
            'hour', false, '', timestamptz '2100-01-01T00:00:00Z',
            timestamptz '2026-02-01T00:00:00Z' + g * interval '1 minute',
            timestamptz '2026-02-01T00:00:00Z' + g * interval '1 minute'
       FROM generate_series(1, $3::int) g`,
    [exportsOrganizationId, await projectOf(c, exportsOrganizationId), SEED.exports],
  );
  await step(
    'batch export runs',
    `INSERT INTO batch_export_runs (batch_export_id, status, records_completed, records_total_count,
                                    data_interval_start, data_interval_end, created_at, finished_at, last_updated_at)
     SELECT e.id, 'Completed', 1000 + k, 1000 + k, t.ts - interval '1 hour', t.ts, t.ts + interval '1 minute',
            t.ts + interval '5 minutes', t.ts + interval '5 minutes'
       FROM batch_exports e
       CROSS JOIN generate_series(1, $2::int) k
       CROSS JOIN LATERAL (SELECT timestamptz '2026-03-01T00:00:00Z' + k * interval '1 hour' AS ts) t
      WHERE e.organization_id = $1`,
    [exportsOrganizationId, SEED.runsPerExport],
  );

  const schedulerOrganizationId = await orgId(c, organizations);
  await step(
    'scheduler exports',
    `INSERT INTO batch_exports (organization_id, team_id, name, model, destination_type, destination_config,
                                interval, paused, scheduled_through, created_at, last_updated_at)
     SELECT $1, $2, format('Scheduled export %s', g), 'events', 'NoOp', '{}'::jsonb, 'hour', false,
            timestamptz '2100-01-01T00:00:00Z', now() - interval '2 days', now() - interval '2 days'
       FROM generate_series(1, $3::int) g`,
    [schedulerOrganizationId, await projectOf(c, schedulerOrganizationId), SEED.schedulerExports],
  );

  if (await hasTable(c, 'access_controls')) await seedAccessRules(c, step, userId, exportsOrganizationId);
  const ownerSecret = newSecret();
  await seedOwner(c, step, ownerSecret);
  if (hasRecordings && (await hasTable(c, 'recording_access_rules')))
    await seedRecordingRule(c, step, await orgId(c, 2));

  const recordings = hasRecordings ? await seedRecordings(c, await orgId(c, 2), step, userId) : null;

  const fixture: Fixture = {
    fingerprint,
    apiKey: secret,
    userId,
    ownerApiKey: ownerSecret,
    retrieveOrganizationId: await orgId(c, 150),
    exportsOrganizationId,
    invitesOrganizationId: await orgId(c, 1),
    schedulerOrganizationId,
    recordings,
  };
  await c.query('CREATE TABLE bench_fixture (fixture jsonb NOT NULL)');
  await c.query('INSERT INTO bench_fixture (fixture) VALUES ($1)', [JSON.stringify(fixture)]);
  await c.query('COMMIT');
  const started = Date.now();
  await c.query('VACUUM ANALYZE');
  log(`seed: VACUUM ANALYZE in ${Date.now() - started} ms`);
  return fixture;
}

async function hasTable(c: pg.ClientBase, name: string): Promise<boolean> {
  return (await c.query('SELECT to_regclass($1) IS NOT NULL AS present', [name])).rows[0].present as boolean;
}

/**
 * Roles and access rules, so the read scenarios resolve them as a member does: the caller becomes a plain member of
 * every other organization of theirs (orgs 0 and 2, of the exports and the recordings, and 150, the retrieved one,
 * among them; org 1, the invites', keeps them owner), and in each of their organizations a role holds them and one
 * other member. Every project of theirs has a default rule, a role rule and the caller's rule at the project level,
 * and the same three on each of the four resources, plus a `query` rule of every other member; 50 exports of the
 * exports organization have their own default and caller rules, 50 others a rule of another member. None of them
 * hides anything from the caller, so both sides answer the same JSON.
 */
async function seedAccessRules(
  c: pg.ClientBase,
  step: (what: string, sql: string, params?: unknown[]) => Promise<void>,
  userId: number,
  exportsOrganizationId: string,
): Promise<void> {
  const callerOrgs = `(SELECT o.id, o.n FROM ${ORG} o WHERE o.n < ${SEED.callerOrganizations})`;
  await step(
    'caller as a member',
    `UPDATE organization_memberships m SET level = 1 FROM ${callerOrgs} o
      WHERE m.organization_id = o.id AND m.user_id = $1 AND o.n % 2 = 0`,
    [userId],
  );
  await step(
    'roles',
    `INSERT INTO roles (organization_id, name) SELECT o.id, 'Bench role' FROM ${callerOrgs} o`,
  );
  await step(
    'role memberships',
    `INSERT INTO role_memberships (role_id, user_id, organization_member_id)
     SELECT r.id, m.user_id, m.id FROM roles r
       JOIN LATERAL (SELECT * FROM organization_memberships m WHERE m.organization_id = r.organization_id
                      ORDER BY m.user_id = $1 DESC, m.joined_at LIMIT 2) m ON true
      WHERE r.name = 'Bench role'`,
    [userId],
  );
  await step(
    'project and resource rules',
    `INSERT INTO access_controls (team_id, resource, resource_id, access_level, organization_member_id, role_id)
     SELECT p.id, t.resource, CASE WHEN t.resource = 'project' THEN p.id::text END,
            CASE WHEN t.resource = 'project' THEN 'member' WHEN s.subject = 'default' THEN 'viewer' ELSE 'editor' END,
            CASE WHEN s.subject = 'member' THEN m.id END, CASE WHEN s.subject = 'role' THEN r.id END
       FROM ${callerOrgs} o
       JOIN projects p ON p.organization_id = o.id
       JOIN organization_memberships m ON m.organization_id = o.id AND m.user_id = $1
       JOIN roles r ON r.organization_id = o.id
      CROSS JOIN (VALUES ('project'), ('session_recording'), ('batch_export'), ('plugin'), ('query')) t(resource)
      CROSS JOIN (VALUES ('default'), ('role'), ('member')) s(subject)`,
    [userId],
  );
  await step(
    "other members' rules",
    `INSERT INTO access_controls (team_id, resource, access_level, organization_member_id)
     SELECT p.id, 'query', 'none', m.id
       FROM ${callerOrgs} o
       JOIN projects p ON p.organization_id = o.id
       JOIN organization_memberships m ON m.organization_id = o.id AND m.user_id <> $1`,
    [userId],
  );
  await step(
    'export rules',
    `INSERT INTO access_controls (team_id, resource, resource_id, access_level, organization_member_id)
     SELECT e.team_id, 'batch_export', e.id::text, x.level, x.member
       FROM (SELECT id, team_id, row_number() OVER (ORDER BY created_at) AS k FROM batch_exports
              WHERE organization_id = $2) e
       CROSS JOIN LATERAL (
         SELECT 'viewer' AS level, NULL::uuid AS member WHERE e.k <= 50
         UNION ALL
         SELECT 'editor', m.id FROM organization_memberships m
          WHERE e.k <= 50 AND m.organization_id = $2 AND m.user_id = $1
         UNION ALL
         SELECT 'none', m.id FROM organization_memberships m
          WHERE e.k > 50 AND e.k <= 100 AND m.organization_id = $2 AND m.user_id <> $1
       ) x`,
    [userId, exportsOrganizationId],
  );
}

/** The e-mail of the second caller, owner of the caller's 200 organizations (`Fixture.ownerApiKey`). */
export const OWNER_EMAIL = 'bench-owner@bench.example';

/**
 * The second caller: owner of the caller's 200 organizations (joined half an hour after the caller), with a key
 * of every scope. No access rule names them, and none limits an owner.
 */
export async function seedOwner(
  c: pg.ClientBase,
  step: (what: string, sql: string, params?: unknown[]) => Promise<void>,
  secret: string,
): Promise<void> {
  await step(
    'owner',
    `INSERT INTO users (email, distinct_id, first_name, last_name, is_email_verified)
     VALUES ($1, 'bench-owner', 'Bench', 'Owner', true)`,
    [OWNER_EMAIL],
  );
  await step(
    'owner memberships',
    `INSERT INTO organization_memberships (organization_id, user_id, level, joined_at, updated_at)
     SELECT o.id, u.id, 15, o.created_at + interval '30 minutes', o.created_at + interval '30 minutes'
       FROM ${ORG} o CROSS JOIN users u WHERE u.email = $1 AND o.n < $2`,
    [OWNER_EMAIL, SEED.callerOrganizations],
  );
  await step(
    'owner api key',
    `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, last_used_at)
     SELECT id, 'bench owner', $2, $3, ARRAY['*'], now() FROM users WHERE email = $1`,
    [OWNER_EMAIL, createHash('sha256').update(secret).digest('hex'), `phx_...${secret.slice(-4)}`],
  );
}

/** The start URL pattern of the recordings' access rule: 1,000 of the 1,000,000 recordings, none of the newest 998. */
export const HIDDEN_START_URL = 'https://app.bench.test/page/999';

/**
 * A recording access rule of the recordings' project that the caller (a plain member there) is subject to: the
 * recordings started at HIDDEN_START_URL are for the role `Bench reviewers` only, which the caller does not hold.
 */
export async function seedRecordingRule(
  c: pg.ClientBase,
  step: (what: string, sql: string, params?: unknown[]) => Promise<void>,
  organizationId: string,
): Promise<void> {
  await step(
    'recording access rule',
    `WITH role AS (INSERT INTO roles (organization_id, name) VALUES ($1, 'Bench reviewers') RETURNING id),
          rule AS (INSERT INTO recording_access_rules (team_id, kind, url_pattern)
                   SELECT id, 'start_url', $2 FROM projects WHERE organization_id = $1 RETURNING id)
     INSERT INTO recording_access_rule_roles (rule_id, role_id) SELECT rule.id, role.id FROM rule, role`,
    [organizationId, HIDDEN_START_URL],
  );
}

/**
 * 100,000 persons (one distinct id each, an e-mail property) and 1,000,000 recordings of theirs in the default
 * project of `organizationId`, two seconds apart, newest first from 2026-11-01; the caller has viewed every
 * third of the newest thousand. The per-project recording counter is kept by the schema's own triggers.
 */
async function seedRecordings(
  c: pg.ClientBase,
  organizationId: string,
  step: (what: string, sql: string, params?: unknown[]) => Promise<void>,
  userId: number,
): Promise<Fixture['recordings']> {
  const projectId = await projectOf(c, organizationId);
  await step(
    'persons',
    `INSERT INTO persons (team_id, properties, created_at)
     SELECT $1, jsonb_build_object('email', format('person-%s@bench.example', g), 'plan', 'free'),
            timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second'
       FROM generate_series(1, $2::int) g`,
    [projectId, SEED.persons],
  );
  const first = (
    await c.query<{ id: number }>('SELECT min(id) AS id FROM persons WHERE team_id = $1', [projectId])
  ).rows[0].id;
  await step(
    'person distinct ids',
    `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id)
     SELECT $1, format('person-%s', p.id - $2::int + 1), p.id FROM persons p WHERE p.team_id = $1`,
    [projectId, first],
  );
  await step(
    'session recordings',
    `INSERT INTO session_recordings (team_id, session_id, distinct_id, person_id, start_time, end_time,
                                     click_count, keypress_count, mouse_activity_count, console_log_count,
                                     console_warn_count, console_error_count, active_ms, event_count, start_url,
                                     snapshot_source, created_at, last_event_received_at)
     SELECT $1, format('bench-%s', lpad(g::text, 7, '0')), format('person-%s', 1 + g % $3::int), $2::int + g % $3::int,
            t.start_time, t.start_time + (10 + g % 600) * interval '1 second',
            g % 50, g % 30, g % 200, g % 7, g % 3, g % 2, (g % 600) * 700, 100 + g % 400,
            format('https://app.bench.test/page/%s', g % 1000), 'web', t.start_time,
            t.start_time + (10 + g % 600) * interval '1 second'
       FROM generate_series(1, $4::int) g
       CROSS JOIN LATERAL (SELECT timestamptz '2026-11-01T00:00:00Z' - g * interval '2 seconds' AS start_time) t`,
    [projectId, first, SEED.persons, SEED.recordings],
  );
  await step(
    'recording views',
    `INSERT INTO session_recording_views (team_id, session_id, user_id, viewed_at)
     SELECT $1, format('bench-%s', lpad(g::text, 7, '0')), $2, timestamptz '2026-11-02T00:00:00Z'
       FROM generate_series(3, 1000, 3) g`,
    [projectId, userId],
  );
  return { projectId, recordingId: 'bench-0000001', count: SEED.recordings };
}

/** The fixture of an already seeded database, when its fingerprint is the expected one. */
export async function readFixture(c: pg.ClientBase, fingerprint: string): Promise<Fixture | null> {
  const exists = await c.query(`SELECT 1 FROM pg_tables WHERE tablename = 'bench_fixture'`);
  if (!exists.rowCount) return null;
  const row = (await c.query<{ fixture: Fixture }>('SELECT fixture FROM bench_fixture')).rows[0];
  return row?.fixture.fingerprint === fingerprint ? row.fixture : null;
}
