import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { updateAsService } from '../support/test-database.js';

interface PersonView {
  id: string;
  uuid: string;
  name: string;
  distinct_ids: string[];
  distinct_ids_count: number;
  properties: Record<string, unknown>;
  created_at: string;
  is_identified: boolean;
}

interface PageView {
  count: number;
  next: string | null;
  previous: string | null;
  results: PersonView[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The persons API (`/api/projects/:project_id/persons/`): PostHog's fields, filters and scopes, on persons made
 * by real capture, and pages bounded in rows and bytes.
 */
describe('Persons API', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let projectId: number;
  let token: string;
  const anonAda = randomUUID();

  const capture = (events: Record<string, unknown>[]) =>
    t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: events.map((e) => ({ uuid: randomUUID(), timestamp: new Date().toISOString(), ...e })),
      })
      .expect(200);
  const list = async (query: Record<string, unknown> = {}, project = projectId): Promise<PageView> =>
    (await t.http.get(`/api/projects/${project}/persons/`).query(query).set(owner.auth).expect(200))
      .body as PageView;
  const distinctIdsOf = (page: PageView) => page.results.map((p) => p.distinct_ids[0]);

  beforeAll(async () => {
    // The smallest page budget: a few 30 KB persons fill a page.
    t = await createTestApp({ PUBLIC_MAX_CONCURRENT_PER_IP: '0', PERSONS_LIST_MAX_BYTES: '64kb' });
    owner = await t.factories.user();
    other = await t.factories.user();
    const org = await t.factories.organization(owner, 'Persons');
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    // One request each, so the persons are created in this order (the list is newest first).
    await capture([{ event: '$pageview', distinct_id: anonAda, properties: { $set: { plan: 'pro' } } }]);
    await capture([
      {
        event: '$identify',
        distinct_id: 'ada@example.com',
        properties: { $anon_distinct_id: anonAda, $set: { email: 'ada@example.com', name: 'Ada Lovelace' } },
      },
    ]);
    await capture([
      { event: 'signup', distinct_id: 'bob-1', properties: { $set: { name: 'Bob', plan: 'free' } } },
    ]);
    await capture([
      {
        event: 'signup',
        distinct_id: 'carol-1',
        properties: { $set: { email: 'carol@example.org', age: 41 } },
      },
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("lists a project's persons newest first with PostHog's fields", async () => {
    const page = await list();
    expect(page.count).toBe(3);
    expect(page.next).toBeNull();
    expect(distinctIdsOf(page)).toEqual(['carol-1', 'bob-1', 'ada@example.com']);
    const [ada] = (await t.dataSource.query(
      `SELECT p.id, p.uuid, p.created_at FROM persons p JOIN person_distinct_ids d ON d.team_id = p.team_id AND d.person_id = p.id
        WHERE d.team_id = $1 AND d.distinct_id = $2`,
      [projectId, anonAda],
    )) as { id: number; uuid: string; created_at: Date }[];
    expect(page.results[2]).toEqual({
      id: ada.uuid,
      uuid: ada.uuid,
      name: 'ada@example.com',
      // The identified id first, though the anonymous one is older.
      distinct_ids: ['ada@example.com', anonAda],
      distinct_ids_count: 2,
      properties: { plan: 'pro', email: 'ada@example.com', name: 'Ada Lovelace' },
      created_at: ada.created_at.toISOString(),
      is_identified: true,
    });
    expect(page.results[2].id).toMatch(UUID);
    expect(page.results[1]).toMatchObject({ name: 'Bob', is_identified: false, distinct_ids_count: 1 });
    expect(page.results[0]).toMatchObject({ name: 'carol@example.org', properties: { age: 41 } });

    // Retrieve by the uuid (the list's id) or the integer id.
    const byUuid = await t.http
      .get(`/api/projects/${projectId}/persons/${ada.uuid}/`)
      .set(owner.auth)
      .expect(200);
    expect(byUuid.body).toEqual(page.results[2]);
    const byId = await t.http
      .get(`/api/projects/${projectId}/persons/${ada.id}/`)
      .set(owner.auth)
      .expect(200);
    expect(byId.body).toEqual(page.results[2]);
  });

  it('filters by distinct id, e-mail, uuid and search as PostHog does', async () => {
    expect(distinctIdsOf(await list({ distinct_id: anonAda }))).toEqual(['ada@example.com']);
    expect(distinctIdsOf(await list({ distinct_id: 'bob-1' }))).toEqual(['bob-1']);
    expect((await list({ distinct_id: 'nobody' })).count).toBe(0);
    expect(distinctIdsOf(await list({ email: 'carol@example.org' }))).toEqual(['carol-1']);
    const bob = (await list({ distinct_id: 'bob-1' })).results[0];
    expect(distinctIdsOf(await list({ uuid: `${bob.uuid.toUpperCase()},${randomUUID()}` }))).toEqual([
      'bob-1',
    ]);
    // Search: the e-mail, the name (case-insensitive), a distinct id, the uuid.
    expect(distinctIdsOf(await list({ search: 'LOVELACE' }))).toEqual(['ada@example.com']);
    expect(distinctIdsOf(await list({ search: 'example.org' }))).toEqual(['carol-1']);
    expect(distinctIdsOf(await list({ search: 'bob-' }))).toEqual(['bob-1']);
    expect(distinctIdsOf(await list({ search: anonAda.slice(0, 13) }))).toEqual(['ada@example.com']);
    expect(distinctIdsOf(await list({ search: bob.uuid }))).toEqual(['bob-1']);
    expect(distinctIdsOf(await list({ search: 'example' }))).toEqual(['carol-1', 'ada@example.com']);
  });

  it('filters by person properties with PostHog operators; others are 400 naming the field', async () => {
    const props = (filters: unknown[]) => list({ properties: JSON.stringify(filters) });
    expect(
      distinctIdsOf(await props([{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }])),
    ).toEqual(['ada@example.com']);
    expect(distinctIdsOf(await props([{ key: 'plan', value: ['pro', 'free'] }]))).toEqual([
      'bob-1',
      'ada@example.com',
    ]);
    expect(distinctIdsOf(await props([{ key: 'plan', value: 'pro', operator: 'is_not' }]))).toEqual([
      'carol-1',
      'bob-1',
    ]);
    expect(
      distinctIdsOf(await props([{ key: 'email', value: 'EXAMPLE.COM', operator: 'icontains' }])),
    ).toEqual(['ada@example.com']);
    expect(distinctIdsOf(await props([{ key: 'plan', operator: 'is_set', type: 'person' }]))).toEqual([
      'bob-1',
      'ada@example.com',
    ]);
    expect(distinctIdsOf(await props([{ key: 'plan', operator: 'is_not_set' }]))).toEqual(['carol-1']);
    expect(distinctIdsOf(await props([{ key: 'age', value: 40, operator: 'gt' }]))).toEqual(['carol-1']);
    // Every filter must hold.
    const both = await props([
      { key: 'plan', operator: 'is_set' },
      { key: 'name', value: 'bob', operator: 'icontains' },
    ]);
    expect(distinctIdsOf(both)).toEqual(['bob-1']);
    expect(both.count).toBe(1);

    const bad = async (query: Record<string, string>, attr: string, detail?: string) => {
      const res = await t.http
        .get(`/api/projects/${projectId}/persons/`)
        .query(query)
        .set(owner.auth)
        .expect(400);
      expect(res.body).toMatchObject({ type: 'validation_error', attr });
      if (detail) expect(res.body.detail).toContain(detail);
    };
    await bad(
      { properties: JSON.stringify([{ key: 'plan', value: 'p.*', operator: 'regex' }]) },
      'properties',
      'regex',
    );
    await bad(
      { properties: JSON.stringify([{ key: 'plan', value: 'pro', type: 'event' }]) },
      'properties',
      'person',
    );
    await bad({ properties: '{"plan":' }, 'properties');
    await bad({ properties: '{"plan":"pro"}' }, 'properties');
    await bad({ properties: JSON.stringify([{ value: 'pro' }]) }, 'properties');
    await bad({ uuid: 'not-a-uuid' }, 'uuid');
    await bad({ search: 'x'.repeat(201) }, 'search');
    await bad({ limit: '0' }, 'limit');
  });

  it('answers 401 without a key, 403 without person:read, 404 for another organization or an unknown person', async () => {
    const { uuid } = (await list({ distinct_id: 'bob-1' })).results[0];
    await t.http.get(`/api/projects/${projectId}/persons/`).expect(401);
    const noScope = await t.factories.keyFor(owner, 'query:read');
    const denied = await t.http.get(`/api/projects/${projectId}/persons/`).set(noScope).expect(403);
    expect(denied.body.detail).toContain('person:read');
    await t.http.get(`/api/projects/${projectId}/persons/${uuid}/`).set(noScope).expect(403);
    const scoped = await t.factories.keyFor(owner, 'person:read');
    await t.http.get(`/api/projects/${projectId}/persons/`).set(scoped).expect(200);
    await t.http.get(`/api/projects/${projectId}/persons/${uuid}/`).set(scoped).expect(200);
    await t.http.get(`/api/projects/${projectId}/persons/`).set(other.auth).expect(404);
    await t.http.get(`/api/projects/${projectId}/persons/${uuid}/`).set(other.auth).expect(404);
    // A person of another organization's project is not found through this project.
    const otherOrg = await t.factories.organization(other, 'Elsewhere');
    await t.http
      .post('/e/')
      .send({ api_key: otherOrg.teams[0].api_token, event: 'x', distinct_id: 'elsewhere-1', properties: {} })
      .expect(200);
    const theirs = (
      await t.http.get(`/api/projects/${otherOrg.teams[0].id}/persons/`).set(other.auth).expect(200)
    ).body as PageView;
    expect(distinctIdsOf(theirs)).toEqual(['elsewhere-1']);
    await t.http
      .get(`/api/projects/${projectId}/persons/${theirs.results[0].uuid}/`)
      .set(owner.auth)
      .expect(404);
    await t.http.get(`/api/projects/${projectId}/persons/${randomUUID()}/`).set(owner.auth).expect(404);
    await t.http.get(`/api/projects/${projectId}/persons/not-an-id/`).set(owner.auth).expect(404);
    await t.http.get(`/api/projects/999999/persons/`).set(owner.auth).expect(404);
  });

  it('marks a person identified by $create_alias too, also when its $set is refused, and not by other events', async () => {
    await capture([{ event: 'visit', distinct_id: 'dave-anon', properties: {} }]);
    expect((await list({ distinct_id: 'dave-anon' })).results[0].is_identified).toBe(false);
    await capture([
      {
        event: '$create_alias',
        distinct_id: 'dave-anon',
        // Past PERSON_SET_MAX_BYTES (64 KB): the $set is left out, the link and its mark are not.
        properties: { alias: 'dave@example.com', $set: { blob: 'x'.repeat(70_000) } },
      },
    ]);
    const [dave] = (await list({ distinct_id: 'dave@example.com' })).results;
    expect(dave).toMatchObject({ is_identified: true, distinct_ids_count: 2, properties: {} });
    expect(dave.distinct_ids.sort()).toEqual(['dave-anon', 'dave@example.com']);
  });

  describe('bounds', () => {
    let boundedProject: number;
    let boundedToken: string;

    beforeAll(async () => {
      const org = await t.factories.organization(owner, 'Bounded persons');
      boundedProject = org.teams[0].id;
      boundedToken = org.teams[0].api_token;
      await t.http
        .post('/batch/')
        .send({
          api_key: boundedToken,
          batch: ['big-1', 'big-2', 'big-3', 'big-4', 'big-5', 'huge-1'].map((distinct_id) => ({
            event: 'x',
            uuid: randomUUID(),
            distinct_id,
            properties: {},
          })),
        })
        .expect(200);
      // 30 KB persons, and one of 200 KB: past the page budget (64 KB) by itself. (Built from text, not with
      // jsonb_build_object: Citus refuses a STABLE function over columns in an UPDATE.)
      await updateAsService(
        t.dataSource,
        `UPDATE persons p SET properties = ('{"blob":"' || repeat(d.distinct_id, CASE WHEN d.distinct_id = 'huge-1' THEN 30000 ELSE 6000 END) || '"}')::jsonb
           FROM person_distinct_ids d WHERE d.team_id = p.team_id AND d.person_id = p.id AND d.team_id = $1`,
        [boundedProject],
      );
    });

    it('ends a page early at PERSONS_LIST_MAX_BYTES, and next starts at the first person left out', async () => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let page = await list({ limit: 100 }, boundedProject);
      for (let i = 0; i < 10; i++) {
        expect(page.count).toBe(6);
        seen.push(...distinctIdsOf(page));
        sizes.push(page.results.length);
        if (!page.next) break;
        expect(new URL(page.next).searchParams.get('limit')).toBe('100');
        page = (
          await t.http
            .get(new URL(page.next).pathname + new URL(page.next).search)
            .set(owner.auth)
            .expect(200)
        ).body as PageView;
      }
      // Newest first: huge-1 (180 KB) alone on its page; then a 30 KB person is kept while those before it on
      // the page hold under 64 KB: three, then the last two.
      expect(seen).toEqual(['huge-1', 'big-5', 'big-4', 'big-3', 'big-2', 'big-1']);
      expect(sizes).toEqual([1, 3, 2]);
      expect(
        (await list({ limit: 100, distinct_id: 'huge-1' }, boundedProject)).results[0].properties.blob,
      ).toHaveLength(180000);
    });

    it('lists at most 100 distinct ids of a person and counts them all', async () => {
      const [{ id }] = (await t.dataSource.query(
        `SELECT person_id AS id FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = 'big-1'`,
        [boundedProject],
      )) as { id: number }[];
      await t.dataSource.query(
        `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id)
         SELECT $1, 'alias-' || i, $2 FROM generate_series(1, 149) i`,
        [boundedProject, id],
      );
      const [person] = (await list({ distinct_id: 'alias-149' }, boundedProject)).results;
      expect(person.distinct_ids_count).toBe(150);
      expect(person.distinct_ids).toHaveLength(100);
      expect(person.distinct_ids.slice(0, 3)).toEqual(['big-1', 'alias-1', 'alias-2']);
      const one = await t.http
        .get(`/api/projects/${boundedProject}/persons/${id}/`)
        .set(owner.auth)
        .expect(200);
      expect(one.body).toMatchObject({ distinct_ids_count: 150, distinct_ids: person.distinct_ids });
    });
  });
});
