import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ActivityLogPruneTask } from '../../src/activity-log/activity-log-prune.task.js';
import { runCli } from '../../src/cli-dispatch.js';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

/**
 * The activity log (docs/security.md, "Activity log"): every API write leaves one entry in PostHog's shape,
 * written in the write's transaction (a failed entry rolls the write back); reads of a recording, its snapshots
 * and its events are logged before they are served; the lists are confined as the project and organization are;
 * the table refuses UPDATE and DELETE whoever sends them, but the retention prune.
 */

interface Entry {
  id: string;
  user: { uuid: string; email: string } | null;
  is_system: boolean;
  activity: string;
  scope: string;
  item_id: string | null;
  detail: {
    id: string | null;
    name: string | null;
    changes: { type: string; action: string; field: string | null; before: unknown; after: unknown }[] | null;
    context: Record<string, unknown> | null;
  };
  created_at: string;
  team_id: number | null;
  organization_id: string | null;
  api_key_id: string | null;
  ip: string | null;
}

interface LogPage {
  next: string | null;
  previous: string | null;
  results: Entry[];
}

describe('activity log', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let orgId: string;
  let projectId: number;
  let token: string;

  const projectLog = (query = '', as: TestUser = owner) =>
    t.http.get(`/api/projects/${projectId}/activity_log/${query}`).set(as.auth);
  const organizationLog = (query = '', as: TestUser = owner) =>
    t.http.get(`/api/organizations/${orgId}/activity_log/${query}`).set(as.auth);
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await t.dataSource.query(sql, params))[0].n);

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    member = await t.factories.user();
    const org = await t.factories.organization(owner, 'Activity org');
    orgId = org.id;
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
  }, 60000);

  afterAll(async () => {
    await t?.close();
  });

  it("records an update with its changes before and after, who, which key and from where, in PostHog's shape", async () => {
    const before = (await t.http.get(`/api/projects/${projectId}`).set(owner.auth).expect(200)).body as {
      name: string;
    };
    await t.http
      .patch(`/api/projects/${projectId}`)
      .set(owner.auth)
      .send({ name: 'Renamed project' })
      .expect(200);
    const page = (await projectLog('?scope=Project').expect(200)).body as LogPage;
    const entry = page.results[0];
    expect(entry).toMatchObject({
      user: { uuid: owner.uuid, email: owner.email },
      unread: false,
      is_system: false,
      activity: 'updated',
      scope: 'Project',
      item_id: String(projectId),
      team_id: projectId,
      organization_id: orgId,
      api_key_id: owner.keyId,
    });
    expect(entry.detail.changes).toEqual([
      { type: 'Project', action: 'changed', field: 'name', before: before.name, after: 'Renamed project' },
    ]);
    expect(entry.detail.context).toMatchObject({ method: 'PATCH', route: '/api/projects/:id' });
    expect(entry.ip).toMatch(/127\.0\.0\.1|::1/);
    expect(Date.now() - new Date(entry.created_at).getTime()).toBeLessThan(60_000);
  });

  it('records a create with what was sent and the new object’s id, in the organization log', async () => {
    const role = (
      await t.http
        .post(`/api/organizations/${orgId}/roles`)
        .set(owner.auth)
        .send({ name: 'Auditors' })
        .expect(201)
    ).body as { id: string };
    const page = (await organizationLog(`?scope=Role&item_id=${role.id}`).expect(200)).body as LogPage;
    expect(page.results).toHaveLength(1);
    expect(page.results[0]).toMatchObject({
      activity: 'created',
      scope: 'Role',
      item_id: role.id,
      organization_id: orgId,
      team_id: null,
      detail: {
        id: role.id,
        name: 'Auditors',
        changes: [
          { type: 'Role', action: 'created', field: null, before: null, after: { name: 'Auditors' } },
        ],
      },
    });
    // A deletion, with the role's id from the route.
    await t.http.delete(`/api/organizations/${orgId}/roles/${role.id}`).set(owner.auth).expect(204);
    const after = (await organizationLog(`?item_id=${role.id}`).expect(200)).body as LogPage;
    expect(after.results.map((e) => e.activity)).toEqual(['deleted', 'created']);
  });

  it('masks secrets in what it stores (a destination password, a key shown once)', async () => {
    const created = await t.http
      .post(`/api/organizations/${orgId}/batch_exports`)
      .set(owner.auth)
      .send({
        name: 'Masked export',
        model: 'events',
        interval: 'hour',
        destination: {
          type: 'Postgres',
          config: {
            host: '127.0.0.1',
            port: 5432,
            database: 'nowhere',
            user: 'exporter',
            password: 'destination-password-123',
            table_name: 'events_out',
          },
        },
      })
      .expect(201);
    const id = (created.body as { id: string }).id;
    const [row] = (await t.dataSource.query(`SELECT detail, team_id FROM activity_logs WHERE item_id = $1`, [
      id,
    ])) as { detail: Record<string, unknown>; team_id: number }[];
    expect(JSON.stringify(row.detail)).not.toContain('destination-password-123');
    expect(JSON.stringify(row.detail)).toContain('"password":"********"');
    // The export's project, from the answer (an organization route).
    expect(row.team_id).toBe(projectId);
    // An update records each field changed, before and after; a new password only as masked.
    await t.http
      .patch(`/api/organizations/${orgId}/batch_exports/${id}`)
      .set(owner.auth)
      .send({ name: 'Renamed export', destination: { config: { password: 'another-password-456' } } })
      .expect(200);
    const updated = (await projectLog(`?item_id=${id}&scope=BatchExport`).expect(200)).body as LogPage;
    expect(updated.results[0].activity).toBe('updated');
    expect(updated.results[0].detail.changes).toContainEqual({
      type: 'BatchExport',
      action: 'changed',
      field: 'name',
      before: 'Masked export',
      after: 'Renamed export',
    });
    expect(JSON.stringify(updated.results[0].detail)).not.toContain('another-password-456');
    const keys = await t.http
      .post(`/api/projects/${projectId}/project_secret_api_keys`)
      .set(owner.auth)
      .send({ label: 'masked key', scopes: ['feature_flag:read'] })
      .expect(201);
    const secret = (keys.body as { value: string }).value;
    expect(secret).toMatch(/^phs_/);
    expect(
      await count(`SELECT count(*) AS n FROM activity_logs WHERE detail::text LIKE $1`, [`%${secret}%`]),
    ).toBe(0);
  });

  it('rolls the write back when its entry cannot be written: nothing is done unlogged', async () => {
    await t.dataSource.query(
      `ALTER TABLE activity_logs ADD CONSTRAINT test_refuse CHECK (scope NOT IN ('Role', 'Organization')) NOT VALID`,
    );
    try {
      const roles = await count(`SELECT count(*) AS n FROM roles WHERE organization_id = $1`, [orgId]);
      const refused = await t.http
        .post(`/api/organizations/${orgId}/roles`)
        .set(owner.auth)
        .send({ name: 'Never made' })
        .expect(500);
      expect(refused.body).toMatchObject({ code: 'activity_log_failed' });
      expect(await count(`SELECT count(*) AS n FROM roles WHERE organization_id = $1`, [orgId])).toBe(roles);
      // A write of several statements in a transaction of its own (an organization and its first project).
      const organizations = await count(`SELECT count(*) AS n FROM organizations`);
      const projects = await count(`SELECT count(*) AS n FROM projects`);
      await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Never org' }).expect(500);
      expect(await count(`SELECT count(*) AS n FROM organizations`)).toBe(organizations);
      expect(await count(`SELECT count(*) AS n FROM projects`)).toBe(projects);
    } finally {
      await t.dataSource.query(`ALTER TABLE activity_logs DROP CONSTRAINT test_refuse`);
    }
    // Logged again once the entry can be written.
    await t.http.post(`/api/organizations/${orgId}/roles`).set(owner.auth).send({ name: 'Made' }).expect(201);
  });

  it('records an invite in the transaction that creates it, before its e-mail (a service that commits itself)', async () => {
    const invite = (
      await t.http
        .post(`/api/organizations/${orgId}/invites`)
        .set(owner.auth)
        .send({ target_email: 'audited@example.com', level: 1 })
        .expect(201)
    ).body as { id: string };
    const page = (await organizationLog(`?scope=OrganizationInvite&item_id=${invite.id}`).expect(200))
      .body as LogPage;
    expect(page.results).toHaveLength(1);
    expect(page.results[0]).toMatchObject({ activity: 'created', user: { uuid: owner.uuid } });
    await t.dataSource.query(
      `ALTER TABLE activity_logs ADD CONSTRAINT test_refuse_invites CHECK (scope <> 'OrganizationInvite') NOT VALID`,
    );
    try {
      await t.http
        .post(`/api/organizations/${orgId}/invites`)
        .set(owner.auth)
        .send({ target_email: 'never-invited@example.com', level: 1 })
        .expect(500);
      expect(
        await count(
          `SELECT count(*) AS n FROM organization_invites WHERE target_email = 'never-invited@example.com'`,
        ),
      ).toBe(0);
    } finally {
      await t.dataSource.query(`ALTER TABLE activity_logs DROP CONSTRAINT test_refuse_invites`);
    }
  });

  describe('recording reads', () => {
    let sessionId: string;

    beforeAll(async () => {
      sessionId = newSessionId('audit');
      const at = t.clock.now().getTime() - 60_000;
      await t.http
        .post('/s/')
        .send([
          snapshotEvent({
            token,
            sessionId,
            events: [rr.meta(at, 'https://audit.example.com/'), rr.full(at + 10), rr.click(at + 1000)],
          }),
        ])
        .expect(200);
    });

    it('logs a read of a recording, of its snapshots and of its events, by whom', async () => {
      const base = `/api/projects/${projectId}`;
      await t.http.get(`${base}/session_recordings/${sessionId}`).set(member.auth).expect(200);
      await t.http.get(`${base}/session_recordings/${sessionId}/snapshots`).set(member.auth).expect(200);
      await t.http.get(`${base}/events?session_id=${sessionId}`).set(member.auth).expect(200);
      const page = (await projectLog(`?item_id=${sessionId}&user=${member.uuid}`).expect(200))
        .body as LogPage;
      expect(page.results.map((e) => [e.activity, e.scope, e.user?.uuid])).toEqual([
        ['viewed_events', 'Replay', member.uuid],
        ['viewed_snapshots', 'Replay', member.uuid],
        ['viewed', 'Replay', member.uuid],
      ]);
      // A list of recordings is not a read of one.
      const reads = await count(`SELECT count(*) AS n FROM activity_logs WHERE scope = 'Replay'`);
      await t.http.get(`${base}/session_recordings`).set(member.auth).expect(200);
      expect(await count(`SELECT count(*) AS n FROM activity_logs WHERE scope = 'Replay'`)).toBe(reads);
    });

    it('answers an error instead of serving a read it could not log', async () => {
      await t.dataSource.query(
        `ALTER TABLE activity_logs ADD CONSTRAINT test_refuse_reads CHECK (scope <> 'Replay') NOT VALID`,
      );
      try {
        const res = await t.http
          .get(`/api/projects/${projectId}/session_recordings/${sessionId}/snapshots`)
          .set(member.auth)
          .expect(500);
        expect(res.body).toMatchObject({ code: 'activity_log_failed' });
      } finally {
        await t.dataSource.query(`ALTER TABLE activity_logs DROP CONSTRAINT test_refuse_reads`);
      }
    });

    it('answers the 503 of an overloaded database, not activity_log_failed, when the log insert times out', async () => {
      // The insert cancelled as statement_timeout cancels it (query_canceled, 57014), for reads of recordings only.
      await t.dataSource.query(`
        CREATE FUNCTION test_time_out_reads() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.scope = 'Replay' THEN
            RAISE EXCEPTION USING ERRCODE = '57014', MESSAGE = 'canceling statement due to statement timeout';
          END IF;
          RETURN NEW;
        END $$`);
      await t.dataSource.query(
        `CREATE TRIGGER test_time_out_reads BEFORE INSERT ON activity_logs
           FOR EACH ROW EXECUTE FUNCTION test_time_out_reads()`,
      );
      try {
        const res = await t.http
          .get(`/api/projects/${projectId}/session_recordings/${sessionId}`)
          .set(member.auth)
          .expect(503);
        expect(res.body).toMatchObject({ type: 'server_error', code: 'timeout' });
      } finally {
        await t.dataSource.query(`DROP TRIGGER test_time_out_reads ON activity_logs`);
        await t.dataSource.query(`DROP FUNCTION test_time_out_reads()`);
      }
    });

    it('hides recording reads from a member whose access rules put recordings at none, and the whole log at project access none', async () => {
      const membership = (
        await t.dataSource.query(
          `SELECT id FROM organization_memberships WHERE user_id = $1 AND organization_id = $2`,
          [member.id, orgId],
        )
      )[0].id as string;
      const visible = (await projectLog(`?item_id=${sessionId}`, member).expect(200)).body as LogPage;
      expect(visible.results.length).toBeGreaterThan(0);
      await t.http
        .put(`/api/projects/${projectId}/resource_access_controls`)
        .set(owner.auth)
        .send({ resource: 'session_recording', organization_member: membership, access_level: 'none' })
        .expect(200);
      const hidden = (await projectLog(`?item_id=${sessionId}`, member).expect(200)).body as LogPage;
      expect(hidden.results).toEqual([]);
      await t.http
        .put(`/api/projects/${projectId}/access_controls`)
        .set(owner.auth)
        .send({ organization_member: membership, access_level: 'none' })
        .expect(200);
      await projectLog('', member).expect(404);
      // The organization log is for admins and owners.
      await organizationLog('', member).expect(403);
      await t.dataSource.query('DELETE FROM access_controls');
    });
  });

  it('pages newest first through next and previous cursors, and filters by user, scope, item and dates', async () => {
    for (const name of ['Page A', 'Page B', 'Page C']) {
      await t.http.post(`/api/organizations/${orgId}/roles`).set(owner.auth).send({ name }).expect(201);
    }
    const first = (await organizationLog('?scope=Role&limit=2').expect(200)).body as LogPage;
    expect(first.results.map((e) => e.detail.name)).toEqual(['Page C', 'Page B']);
    expect(first.previous).toBeNull();
    const next = new URL(first.next!);
    const second = (
      await t.http
        .get(next.pathname + next.search)
        .set(owner.auth)
        .expect(200)
    ).body as LogPage;
    expect(second.results[0].detail.name).toBe('Page A');
    const previous = new URL(second.previous!);
    const back = (
      await t.http
        .get(previous.pathname + previous.search)
        .set(owner.auth)
        .expect(200)
    ).body as LogPage;
    expect(back.results.map((e) => e.detail.name)).toEqual(['Page C', 'Page B']);
    expect(back.previous).toBeNull();
    // Filters.
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect(((await organizationLog(`?date_from=${future}`).expect(200)).body as LogPage).results).toEqual([]);
    const byMember = (await organizationLog(`?user=${member.uuid}`).expect(200)).body as LogPage;
    expect(byMember.results.every((e) => e.user?.uuid === member.uuid)).toBe(true);
    // Bad input.
    expect((await organizationLog('?cursor=nope').expect(400)).body).toMatchObject({ attr: 'cursor' });
    expect((await organizationLog('?user=someone').expect(400)).body).toMatchObject({ attr: 'user' });
    expect((await organizationLog('?limit=101').expect(400)).body).toMatchObject({ attr: 'limit' });
    expect((await organizationLog('?date_to=yesterday').expect(400)).body).toMatchObject({ attr: 'date_to' });
    // The scope activity_log:read.
    const noScope = await t.factories.keyFor(owner, 'organization:read');
    await t.http.get(`/api/organizations/${orgId}/activity_log/`).set(noScope).expect(403);
  });

  it('exports the log as CSV', async () => {
    const res = await t.http
      .get(`/api/organizations/${orgId}/activity_log/export?scope=Role`)
      .set(owner.auth)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => done(null, text));
      })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = (res.body as string).trim().split('\n');
    expect(lines[0]).toBe(
      'id,created_at,organization_id,team_id,user_uuid,user_email,is_system,api_key_id,ip,activity,scope,item_id,detail',
    );
    const roles = await count(
      `SELECT count(*) AS n FROM activity_logs WHERE organization_id = $1 AND scope = 'Role'`,
      [orgId],
    );
    expect(lines).toHaveLength(roles + 1);
    expect(lines[1]).toContain(',Role,');
    expect(lines[1]).toContain(owner.email);
  });

  it('records CLI commands as the system, in the transaction of their change, with their options', async () => {
    const lines: string[] = [];
    const cli = (argv: string[]) =>
      runCli(
        argv,
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent' },
        (l) => lines.push(l),
        (l) => lines.push(l),
      );
    expect(
      await cli([
        'service-accounts',
        'create',
        '--org',
        orgId,
        '--name',
        'Audit bot',
        '--scopes',
        'organization:read',
      ]),
    ).toBe(0);
    const page = (await organizationLog('?scope=ServiceAccount').expect(200)).body as LogPage;
    expect(page.results[0]).toMatchObject({
      user: null,
      is_system: true,
      activity: 'service_accounts_create',
      scope: 'ServiceAccount',
      organization_id: orgId,
      api_key_id: null,
      ip: null,
      detail: { context: { command: 'service-accounts create', options: { org: orgId, name: 'Audit bot' } } },
    });
    // A command whose entry cannot be written changes nothing.
    await t.dataSource.query(
      `ALTER TABLE activity_logs ADD CONSTRAINT test_refuse_cli CHECK (scope <> 'ServiceAccount') NOT VALID`,
    );
    try {
      const accounts = await count(`SELECT count(*) AS n FROM users WHERE is_service_account`);
      expect(
        await cli([
          'service-accounts',
          'create',
          '--org',
          orgId,
          '--name',
          'Never bot',
          '--scopes',
          'organization:read',
        ]),
      ).not.toBe(0);
      expect(await count(`SELECT count(*) AS n FROM users WHERE is_service_account`)).toBe(accounts);
    } finally {
      await t.dataSource.query(`ALTER TABLE activity_logs DROP CONSTRAINT test_refuse_cli`);
    }
  });

  it('refuses UPDATE, DELETE and TRUNCATE whoever sends them, and lets only the prune delete expired entries', async () => {
    const [{ id }] = (await t.dataSource.query(`SELECT id FROM activity_logs LIMIT 1`)) as { id: string }[];
    await expect(
      t.dataSource.query(`UPDATE activity_logs SET activity = 'forged' WHERE id = $1`, [id]),
    ).rejects.toThrow(/append-only/);
    await expect(t.dataSource.query(`DELETE FROM activity_logs WHERE id = $1`, [id])).rejects.toThrow(
      /append-only/,
    );
    await expect(t.dataSource.query(`TRUNCATE activity_logs`)).rejects.toThrow(/append-only/);
    // Setting the prune's cutoff by hand does not let a recent entry go.
    await expect(
      t.dataSource.transaction(async (m) => {
        await m.query(`SELECT set_config('activity_log.prune_before', $1, true)`, [
          new Date(Date.now() + 86400_000).toISOString(),
        ]);
        await m.query(`DELETE FROM activity_logs WHERE id = $1`, [id]);
      }),
    ).rejects.toThrow(/append-only/);
    expect(await count(`SELECT count(*) AS n FROM activity_logs WHERE id = $1`, [id])).toBe(1);

    // An entry past ACTIVITY_LOG_RETENTION_DAYS (365) is pruned; the others stay.
    const [old] = (await t.dataSource.query(
      `INSERT INTO activity_logs (organization_id, activity, scope, created_at)
       VALUES ($1, 'updated', 'Organization', now() - interval '400 days') RETURNING id`,
      [orgId],
    )) as { id: string }[];
    const total = await count(`SELECT count(*) AS n FROM activity_logs`);
    expect(await t.app.get(ActivityLogPruneTask).prune()).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM activity_logs WHERE id = $1`, [old.id])).toBe(0);
    expect(await count(`SELECT count(*) AS n FROM activity_logs`)).toBe(total - 1);
  });
});
