/**
 * What recording access rules hide, on every path that shows a recording: the recordings list and its counts,
 * retrieve, snapshots, update and delete, sharing changes, the events of a session (list and retrieve),
 * playlists (their counts, pinned recordings, pin and unpin), shared links (the JSON routes and the replay pages)
 * and the sessions and events batch exports. A rule by start URL pattern and one by person property restrict recordings to
 * the role `Support`: its member watches them, a member outside it gets absence or 404 everywhere, admins and
 * owners see everything, and leaving the role takes effect on the next request. A hostile pattern does not stall.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { startHttpReceiver, waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { NOT_FOUND } from '../support/expectations.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import { margin } from '../support/shared-machine.js';

/** When the recordings are captured (their last events received), within the hour 10:00–11:00. */
const NOW = new Date('2026-11-21T10:30:00.000Z');
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);

interface Page<T> {
  count: number;
  next: string | null;
  results: T[];
}

describe('recording access rules hide what a user may not watch, on every path', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let support: TestUser;
  let member: TestUser;
  let orgId: string;
  let projectId: number;
  let token: string;
  let supportRole: string;
  /** Matched by the start URL rule. */
  const billing = newSessionId('billing');
  /** Matched by the person property rule (its person's e-mail is at bigcorp.com). */
  const vip = newSessionId('vip');
  /** Matched by no rule. */
  const plain = newSessionId('plain');
  const eventIds = { billing: randomUUID(), plain: randomUUID() };
  const ALL = [plain, vip, billing];
  let urlRule: string;
  let personRule: string;

  const project = (rest: string) => `/api/projects/${projectId}${rest}`;
  const recordings = (rest = '') => project(`/session_recordings${rest}`);
  const ids = (body: Page<{ id: string }>) => body.results.map((r) => r.id);
  const list = async (who: TestUser, query = '') =>
    (await t.http.get(recordings(query)).set(who.auth).expect(200)).body as Page<{ id: string }>;
  const capture = (sessionId: string, start: number, href: string, distinctId: string, email: string) =>
    t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token,
          sessionId,
          distinctId,
          events: [rr.meta(start, href), rr.full(start), rr.click(start + 5_000)],
          properties: { $set: { email } },
        }),
      ])
      .expect(200);
  /** The role memberships made through the roles API, by user id (to remove them the same way). */
  const memberships = new Map<number, string>();
  const memberOf = async (roleId: string, user: TestUser) => {
    const created = await t.http
      .post(`/api/organizations/${orgId}/roles/${roleId}/role_memberships`)
      .set(owner.auth)
      .send({ user_uuid: user.uuid })
      .expect(201);
    memberships.set(user.id, created.body.id as string);
  };
  const leave = async (roleId: string, user: TestUser) => {
    await t.http
      .delete(`/api/organizations/${orgId}/roles/${roleId}/role_memberships/${memberships.get(user.id)}`)
      .set(owner.auth)
      .expect(204);
    memberships.delete(user.id);
  };
  const rule = async (body: Record<string, unknown>) =>
    (
      await t.http
        .post(project('/recording_access_rules'))
        .set(owner.auth)
        .send({ role_ids: [supportRole], ...body })
        .expect(201)
    ).body.id as string;

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '1',
    });
    t.clock.set(NOW);
    owner = await t.factories.user();
    admin = await t.factories.user();
    support = await t.factories.user();
    member = await t.factories.user();
    const org = await t.factories.organization(owner, 'Watched');
    orgId = org.id;
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    await t.factories.member(orgId, admin, MembershipLevel.ADMIN);
    await t.factories.member(orgId, support, MembershipLevel.MEMBER);
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    supportRole = (
      await t.http
        .post(`/api/organizations/${orgId}/roles`)
        .set(owner.auth)
        .send({ name: 'Support' })
        .expect(201)
    ).body.id as string;
    await memberOf(supportRole, support);

    await capture(
      billing,
      T0,
      'https://Shop.Example.com/billing/invoices?id=7',
      'anon-1',
      'anon@example.com',
    );
    await capture(vip, T0 + 60_000, 'https://shop.example.com/', 'vip-1', 'Boss@BigCorp.com');
    await capture(plain, T0 + 120_000, 'https://shop.example.com/home', 'anon-2', 'someone@example.com');
    const event = (uuid: string, sessionId: string, offset: number) => ({
      event: '$pageview',
      uuid,
      distinct_id: 'anon-1',
      timestamp: new Date(T0 + offset).toISOString(),
      properties: { $session_id: sessionId, $current_url: 'https://shop.example.com/' },
    });
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: [event(eventIds.billing, billing, 1_000), event(eventIds.plain, plain, 121_000)],
      })
      .expect(200);
    urlRule = await rule({ kind: 'start_url', url_pattern: 'https://shop.example.com/billing/*' });
    personRule = await rule({
      kind: 'person_property',
      property_key: 'email',
      property_operator: 'icontains',
      property_value: '@bigcorp.com',
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('captured what the rules match: the start URLs and the person properties as stored', async () => {
    const one = async (id: string) =>
      (
        await t.http
          .get(recordings(`/${id}`))
          .set(owner.auth)
          .expect(200)
      ).body;
    expect((await one(billing)).start_url).toBe('https://Shop.Example.com/billing/invoices?id=7');
    expect((await one(vip)).person.properties.email).toBe('Boss@BigCorp.com');
    expect((await one(plain)).person.properties.email).toBe('someone@example.com');
  });

  describe('the recordings list and its counts', () => {
    it('shows everything to the owner, an admin (in no role) and a member of the role', async () => {
      for (const who of [owner, admin, support]) {
        const page = await list(who);
        expect([ids(page), page.count]).toEqual([ALL, 3]);
      }
    });

    it('leaves out of the list, its pages and its totals what a member outside the role may not watch', async () => {
      const page = await list(member);
      expect([ids(page), page.count]).toEqual([[plain], 1]);
      // Pages and totals agree with what is shown, with and without other filters.
      const first = await list(member, '?limit=1');
      expect([ids(first), first.count, first.next]).toEqual([[plain], 1, null]);
      expect((await list(support, '?limit=1')).count).toBe(3);
      for (const query of [
        `?date_from=${encodeURIComponent(new Date(T0 - 1000).toISOString())}`,
        `?having_predicates=${encodeURIComponent('[{"type":"recording","key":"click_count","operator":"gte","value":1}]')}`,
        `?session_ids=${encodeURIComponent(JSON.stringify(ALL))}`,
        `?properties=${encodeURIComponent('[{"key":"email","operator":"is_set","type":"person"}]')}`,
        `?events=${encodeURIComponent('[{"id":"$pageview","type":"events"}]')}`,
        `?exclude_events=${encodeURIComponent('[{"id":"nothing","type":"events"}]')}`,
      ]) {
        const hidden = await list(member, query);
        const shown = await list(support, query);
        expect([query, ids(hidden), hidden.count]).toEqual([
          query,
          ids(shown).filter((id) => id === plain),
          1,
        ]);
        expect(shown.count).toBeGreaterThan(1);
      }
      // Asked for by id, a hidden recording is simply not there.
      const asked = await list(member, `?session_ids=${encodeURIComponent(JSON.stringify([billing, vip]))}`);
      expect([ids(asked), asked.count]).toEqual([[], 0]);
    });
  });

  describe("a recording's own routes", () => {
    const routes = (id: string) =>
      [
        ['get', recordings(`/${id}`)],
        ['get', recordings(`/${id}/snapshots`)],
        ['get', recordings(`/${id}/snapshots?source=blob_v2&blob_key=1`)],
        ['patch', recordings(`/${id}`), { viewed: true }],
        ['put', recordings(`/${id}`), { viewed: true }],
        ['patch', recordings(`/${id}`), { person: { properties: { plan: 'x' } } }],
        ['delete', recordings(`/${id}`)],
        ['get', recordings(`/${id}/sharing`)],
        ['patch', recordings(`/${id}/sharing`), { enabled: true }],
        ['patch', recordings(`/${id}/sharing`), { enabled: false }],
        ['post', recordings(`/${id}/sharing/refresh`)],
      ] as const;

    it('answers 404 on every route of a recording hidden from the caller, changing nothing', async () => {
      const before = await t.dataSource.query(
        `SELECT session_id, deleted_at FROM session_recordings WHERE team_id = $1 ORDER BY session_id`,
        [projectId],
      );
      for (const id of [billing, vip]) {
        for (const [method, path, body] of routes(id)) {
          const req = t.http[method](path).set(member.auth);
          const res = await (body ? req.send(body) : req);
          expect([method, path, res.status, res.body]).toEqual([method, path, 404, NOT_FOUND]);
        }
      }
      expect(
        await t.dataSource.query(
          `SELECT session_id, deleted_at FROM session_recordings WHERE team_id = $1 ORDER BY session_id`,
          [projectId],
        ),
      ).toEqual(before);
      expect(
        await t.dataSource.query(
          `SELECT count(*)::int AS n FROM session_recording_sharing WHERE session_id = ANY($1)`,
          [[billing, vip]],
        ),
      ).toEqual([{ n: 0 }]);
      expect(
        await t.dataSource.query(
          `SELECT count(*)::int AS n FROM session_recording_views WHERE user_id = $1`,
          [member.id],
        ),
      ).toEqual([{ n: 0 }]);
    });

    it('serves them to a member of the role and an admin', async () => {
      for (const who of [support, admin]) {
        for (const id of [billing, vip]) {
          expect(
            (
              await t.http
                .get(recordings(`/${id}`))
                .set(who.auth)
                .expect(200)
            ).body.id,
          ).toBe(id);
          const sources = await t.http
            .get(recordings(`/${id}/snapshots`))
            .set(who.auth)
            .expect(200);
          expect(sources.body.sources.length).toBeGreaterThan(0);
          const key = sources.body.sources[0].blob_key as string;
          await t.http
            .get(recordings(`/${id}/snapshots?source=blob_v2&blob_key=${key}`))
            .set(who.auth)
            .expect(200);
          await t.http
            .get(recordings(`/${id}/sharing`))
            .set(who.auth)
            .expect(200);
        }
      }
      // The member outside the role is not refused everything: a recording no rule matches is theirs to watch.
      await t.http
        .get(recordings(`/${plain}`))
        .set(member.auth)
        .expect(200);
      await t.http
        .get(recordings(`/${plain}/snapshots`))
        .set(member.auth)
        .expect(200);
    });
  });

  describe('one access statement per request', () => {
    /** The statements `send` runs that read the access tables (memberships' access controls, the rules). */
    const accessStatements = async (send: () => Promise<unknown>) => {
      const spy = jest.spyOn(pg.Client.prototype, 'query');
      try {
        await send();
        return spy.mock.calls
          .map(([query]) => (typeof query === 'string' ? query : ((query as { text?: string }).text ?? '')))
          .filter((sql) => /\b(access_controls|recording_access_rules)\b/.test(sql));
      } finally {
        spy.mockRestore();
      }
    };

    it('reads the project, the access controls and the rules that apply to the caller in one statement', async () => {
      const routes: [string, TestUser, number][] = [
        [recordings(`/${billing}`), member, 404],
        [recordings(`/${billing}`), support, 200],
        [recordings(`/${plain}`), member, 200],
        [recordings(`/${vip}/snapshots`), member, 404],
        [recordings(`/${plain}/snapshots`), member, 200],
        [recordings(`/${plain}/sharing`), member, 200],
        [recordings(''), member, 200],
        [project(`/events?session_id=${billing}`), member, 200],
        [project(`/events/${eventIds.plain}`), member, 200],
        [project('/session_recording_playlists'), member, 200],
      ];
      // Warm the keys (a first use writes last_used_at).
      for (const who of [member, support]) await t.http.get(recordings('')).set(who.auth).expect(200);
      for (const [path, who, status] of routes) {
        let body: unknown;
        const statements = await accessStatements(async () => {
          body = (await t.http.get(path).set(who.auth).expect(status)).body;
        });
        expect([path, statements.length]).toEqual([path, 1]);
        // That one statement reads the project, the access controls and the recording rules together.
        expect(statements[0]).toMatch(/FROM projects p/);
        expect(statements[0]).toMatch(/\baccess_controls\b/);
        expect(statements[0]).toMatch(/\brecording_access_rules\b/);
        if (path === recordings(''))
          expect((body as Page<{ id: string }>).results.map((r) => r.id)).toEqual([plain]);
      }
    });
  });

  describe('the events of a session', () => {
    const events = (who: TestUser, query = '') =>
      t.http
        .get(project(`/events${query}`))
        .set(who.auth)
        .expect(200);

    it("leaves out the events of a hidden recording's session, whatever the filter", async () => {
      const hidden = await events(member, `?session_id=${billing}`);
      expect([hidden.body.results, hidden.body.count]).toEqual([[], 0]);
      const all = await events(member);
      expect([all.body.results.map((e: { id: string }) => e.id), all.body.count]).toEqual([
        [eventIds.plain],
        1,
      ]);
      const byProperty = await events(
        member,
        `?properties=${encodeURIComponent(JSON.stringify({ $session_id: billing }))}`,
      );
      expect(byProperty.body.count).toBe(0);
      expect(
        (
          await t.http
            .get(project(`/events/${eventIds.billing}`))
            .set(member.auth)
            .expect(404)
        ).body,
      ).toEqual(NOT_FOUND);
      await t.http
        .get(project(`/events/${eventIds.plain}`))
        .set(member.auth)
        .expect(200);
    });

    it('shows them to a member of the role', async () => {
      const shown = await events(support, `?session_id=${billing}`);
      expect(shown.body.results.map((e: { id: string }) => e.id)).toEqual([eventIds.billing]);
      expect((await events(support)).body.count).toBe(2);
      await t.http
        .get(project(`/events/${eventIds.billing}`))
        .set(support.auth)
        .expect(200);
    });
  });

  describe('playlists', () => {
    let shortId: string;
    const playlists = (rest = '') => project(`/session_recording_playlists${rest}`);

    beforeAll(async () => {
      shortId = (await t.http.post(playlists()).set(owner.auth).send({ name: 'Pinned' }).expect(201)).body
        .short_id as string;
      for (const id of ALL) {
        await t.http
          .post(playlists(`/${shortId}/recordings/${id}`))
          .set(owner.auth)
          .expect(200);
      }
    });

    it('counts and lists only the pinned recordings the caller may watch', async () => {
      const counts = async (who: TestUser) => {
        const one = (
          await t.http
            .get(playlists(`/${shortId}`))
            .set(who.auth)
            .expect(200)
        ).body;
        const listed = (await t.http.get(playlists()).set(who.auth).expect(200)).body.results[0];
        expect(listed.recordings_counts).toEqual(one.recordings_counts);
        return one.recordings_counts.collection.count as number;
      };
      expect([await counts(member), await counts(support), await counts(admin)]).toEqual([1, 3, 3]);
      const pinned = async (who: TestUser, query = '') =>
        (
          await t.http
            .get(playlists(`/${shortId}/recordings${query}`))
            .set(who.auth)
            .expect(200)
        ).body as Page<{ id: string }>;
      const hidden = await pinned(member);
      expect([ids(hidden), hidden.count]).toEqual([[plain], 1]);
      const shown = await pinned(support, '?limit=2');
      expect([ids(shown), shown.count]).toEqual([[plain, vip], 3]);
    });

    it('answers 404 to pinning or unpinning a hidden recording, changing nothing', async () => {
      const other = (await t.http.post(playlists()).set(member.auth).send({ name: 'Mine' }).expect(201)).body
        .short_id as string;
      for (const [method, path] of [
        ['post', playlists(`/${other}/recordings/${billing}`)],
        ['delete', playlists(`/${shortId}/recordings/${billing}`)],
        ['delete', playlists(`/${shortId}/recordings/${vip}`)],
      ] as const) {
        expect((await t.http[method](path).set(member.auth).expect(404)).body).toEqual(NOT_FOUND);
      }
      expect(
        await t.dataSource.query(
          `SELECT p.short_id, count(i.session_id)::int AS n FROM session_recording_playlists p
             LEFT JOIN session_recording_playlist_items i ON i.team_id = p.team_id AND i.playlist_id = p.id
            WHERE p.short_id = ANY($1) GROUP BY p.short_id ORDER BY n`,
          [[other, shortId]],
        ),
      ).toEqual([
        { short_id: other, n: 0 },
        { short_id: shortId, n: 3 },
      ]);
      await t.http
        .post(playlists(`/${other}/recordings/${billing}`))
        .set(support.auth)
        .expect(200);
    });
  });

  describe('shared links', () => {
    const share = async (who: TestUser, id: string) =>
      (
        await t.http
          .patch(recordings(`/${id}/sharing`))
          .set(who.auth)
          .send({ enabled: true })
          .expect(200)
      ).body.access_token as string;
    const publicRoutes = (accessToken: string) => [
      `/api/shared/${accessToken}`,
      `/api/shared/${accessToken}/snapshots`,
      `/api/shared/${accessToken}/events`,
      `/shared/${accessToken}`,
      `/embedded/${accessToken}`,
    ];
    const statuses = async (accessToken: string) =>
      Promise.all(publicRoutes(accessToken).map(async (url) => (await t.http.get(url)).status));

    it("keeps a link working while its issuer may watch the recording, and ends it on the issuer's next loss", async () => {
      const link = await share(support, billing);
      expect(await statuses(link)).toEqual([200, 200, 200, 200, 200]);
      const events = await t.http.get(`/api/shared/${link}/events`).expect(200);
      expect(events.body.count).toBe(1);

      await leave(supportRole, support);
      expect(await statuses(link)).toEqual([404, 404, 404, 404, 404]);
      expect((await t.http.get(`/api/shared/${link}`).expect(404)).body).toEqual(NOT_FOUND);
      // The same request that ends the link hides the recording from its issuer everywhere else too.
      expect(ids(await list(support))).toEqual([plain]);
      await t.http
        .get(recordings(`/${billing}`))
        .set(support.auth)
        .expect(404);

      await memberOf(supportRole, support);
      expect(await statuses(link)).toEqual([200, 200, 200, 200, 200]);
      expect(ids(await list(support))).toEqual(ALL);
    });

    it("keeps an admin's link whatever the roles; a link with no known issuer only shows what no rule matches", async () => {
      const adminLink = await share(admin, vip);
      const plainLink = await share(member, plain);
      expect(await statuses(adminLink)).toEqual([200, 200, 200, 200, 200]);
      await t.dataSource.query(
        `UPDATE session_recording_sharing SET enabled_by_id = NULL WHERE session_id = ANY($1)`,
        [[vip, plain]],
      );
      expect(await statuses(adminLink)).toEqual([404, 404, 404, 404, 404]);
      expect(await statuses(plainLink)).toEqual([200, 200, 200, 200, 200]);
      // Issued again by an admin, the link works again (a new token: the old one is dead).
      const fresh = await t.http
        .post(recordings(`/${vip}/sharing/refresh`))
        .set(admin.auth)
        .expect(200);
      expect(await statuses(fresh.body.access_token as string)).toEqual([200, 200, 200, 200, 200]);
      expect((await t.http.get(`/api/shared/${adminLink}`)).status).toBe(404);
    });
  });

  describe('changes take effect on the next request', () => {
    it('a member who leaves the role loses what it showed at once; a deleted or changed rule applies at once', async () => {
      await leave(supportRole, support);
      expect(ids(await list(support))).toEqual([plain]);
      await memberOf(supportRole, support);
      expect(ids(await list(support))).toEqual(ALL);

      await t.http
        .delete(project(`/recording_access_rules/${personRule}`))
        .set(owner.auth)
        .expect(204);
      expect(ids(await list(member))).toEqual([plain, vip]);
      await t.http
        .get(recordings(`/${vip}`))
        .set(member.auth)
        .expect(200);
      personRule = await rule({
        kind: 'person_property',
        property_key: 'email',
        property_operator: 'icontains',
        property_value: '@bigcorp.com',
      });
      expect(ids(await list(member))).toEqual([plain]);

      // A rule changed to `is_not`: now every recording whose person is not that one is restricted.
      await t.http
        .patch(project(`/recording_access_rules/${personRule}`))
        .set(owner.auth)
        .send({ property_operator: 'is_not', property_value: 'Boss@BigCorp.com' })
        .expect(200);
      expect(ids(await list(member))).toEqual([vip]);
      await t.http
        .patch(project(`/recording_access_rules/${personRule}`))
        .set(owner.auth)
        .send({ property_operator: 'icontains', property_value: '@bigcorp.com' })
        .expect(200);
      expect(ids(await list(member))).toEqual([plain]);
    });

    it('a member made admin sees everything at once', async () => {
      await t.dataSource.query(
        `UPDATE organization_memberships SET level = $3 WHERE organization_id = $1 AND user_id = $2`,
        [orgId, member.id, MembershipLevel.ADMIN],
      );
      expect(ids(await list(member))).toEqual(ALL);
      await t.dataSource.query(
        `UPDATE organization_memberships SET level = $3 WHERE organization_id = $1 AND user_id = $2`,
        [orgId, member.id, MembershipLevel.MEMBER],
      );
      expect(ids(await list(member))).toEqual([plain]);
    });
  });

  describe('batch exports of sessions and events', () => {
    const PASSWORD = 'rules-destination-password';
    let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
    let dest: Awaited<ReturnType<typeof createDestinationDatabase>>;
    let destination: pg.Client;

    beforeAll(async () => {
      receiver = await startHttpReceiver();
      dest = await createDestinationDatabase('rules', PASSWORD);
      destination = new pg.Client({ connectionString: dest.url });
      await destination.connect();
      // The hour of the captures has ended.
      t.clock.set(new Date('2026-11-21T12:00:00.000Z'));
    });
    afterAll(async () => {
      t.clock.set(NOW);
      await receiver?.close();
      await destination?.end();
      if (dest) await dropDestinationDatabase(dest.name);
    });

    /** Runs an export of `model` created by `who` over `[start, end)`; the keys of its rows among ours. */
    const exportAs = async (
      who: TestUser,
      model: 'sessions' | 'events',
      type: 'HTTP' | 'Postgres',
      [start, end] = ['2026-11-21T10:00:00Z', '2026-11-21T11:00:00Z'],
    ) => {
      const table = `${model}_${who.id}_${type.toLowerCase()}`;
      const url = new URL(dest.url);
      const config =
        type === 'HTTP'
          ? { url: receiver.url, token: table }
          : {
              host: url.hostname,
              port: Number(url.port || 5432),
              database: dest.name,
              user: dest.user,
              password: PASSWORD,
              table_name: table,
            };
      const created = await t.http
        .post(`/api/organizations/${orgId}/batch_exports`)
        .set(who.auth)
        .send({ name: table, model, interval: 'hour', destination: { type, config } })
        .expect(201);
      const id = created.body.id as string;
      await t.http
        .post(`/api/organizations/${orgId}/batch_exports/${id}/backfill`)
        .set(who.auth)
        .send({ start_at: start, end_at: end })
        .expect(200);
      const runs = await waitForRunsToEnd(
        t.http,
        who.auth,
        orgId,
        id,
        (Date.parse(end) - Date.parse(start)) / 3_600_000,
      );
      for (const run of runs)
        expect([table, run.status, run.latest_error]).toEqual([table, 'Completed', null]);
      const key = model === 'sessions' ? 'session_id' : 'uuid';
      const rows =
        type === 'HTTP'
          ? receiver.received.filter((r) => r.body.api_key === table).flatMap((r) => r.body.batch)
          : ((await destination.query(`SELECT * FROM ${table}`)).rows as Record<string, unknown>[]);
      const ours: string[] = model === 'sessions' ? ALL : Object.values(eventIds);
      return rows
        .map((row) => String(row[key]))
        .filter((value) => ours.includes(value))
        .sort();
    };

    it("exports the sessions the export's creator may watch when it runs, through either read path", async () => {
      for (const type of ['HTTP', 'Postgres'] as const) {
        expect(await exportAs(member, 'sessions', type)).toEqual([plain]);
        expect(await exportAs(support, 'sessions', type)).toEqual([...ALL].sort());
        expect(await exportAs(admin, 'sessions', type)).toEqual([...ALL].sort());
      }
    });

    it('leaves out of an events export the events of sessions its creator may not watch', async () => {
      // Events are stamped with the database's clock when inserted: a backfill of the hours around it reads them.
      const [{ now }] = (await t.dataSource.query('SELECT now() AS now')) as { now: Date }[];
      const hour = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
      t.clock.set(new Date(hour + 3 * 3_600_000));
      const hours: [string, string] = [
        new Date(hour - 3_600_000).toISOString(),
        new Date(hour + 3_600_000).toISOString(),
      ];
      for (const type of ['HTTP', 'Postgres'] as const) {
        expect(await exportAs(member, 'events', type, hours)).toEqual([eventIds.plain]);
        expect(await exportAs(support, 'events', type, hours)).toEqual(Object.values(eventIds).sort());
      }
    });
  });

  describe('patterns', () => {
    it('treats everything but * literally, and a hostile pattern on a long start URL does not stall', async () => {
      const long = newSessionId('long');
      await capture(long, T0 + 180_000, `https://x.example/${'a'.repeat(8000)}`, 'anon-3', 'x@example.com');
      // Regular expression syntax is literal text: this pattern matches no URL.
      const literal = await rule({
        kind: 'start_url',
        url_pattern: 'https://shop.example.com/(billing|home).*',
      });
      expect(ids(await list(member))).toEqual([long, plain]);
      const hostile = await rule({ kind: 'start_url', url_pattern: `${'*a'.repeat(9)}*b` });
      const started = performance.now();
      const page = await list(member);
      const elapsed = performance.now() - started;
      expect([ids(page), page.count]).toEqual([[long, plain], 2]);
      expect(elapsed).toBeLessThan(margin(2000));
      // The same pattern ending in `a` matches the long URL: hidden.
      await t.http
        .patch(project(`/recording_access_rules/${hostile}`))
        .set(owner.auth)
        .send({ url_pattern: `${'*a'.repeat(10)}` })
        .expect(200);
      expect(ids(await list(member))).toEqual([plain]);
      for (const id of [literal, hostile]) {
        await t.http
          .delete(project(`/recording_access_rules/${id}`))
          .set(owner.auth)
          .expect(204);
      }
      expect(urlRule).toEqual(expect.any(String));
    });
  });
});
