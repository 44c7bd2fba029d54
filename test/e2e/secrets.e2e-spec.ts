import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, readAllSnapshots, rr, snapshotEvent } from '../support/recordings.js';
import {
  bootstrapKey,
  rawRequest,
  type ServiceProcess,
  sleep,
  startService,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
/** The test app's time: just after the recording, which would have expired by the real date (retention). */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const EMAIL = 'alice.private@example.com';
const NAME = 'Alice Privatename';
const DISTINCT_ID = 'distinct-alice-7f3c9a';
const PUBLIC_FIELDS = [
  'active_seconds',
  'activity_score',
  'click_count',
  'console_error_count',
  'console_log_count',
  'console_warn_count',
  'end_time',
  'expiry_time',
  'id',
  'inactive_seconds',
  'keypress_count',
  'mouse_activity_count',
  'ongoing',
  'recording_duration',
  'recording_ttl',
  'retention_period_days',
  'snapshot_source',
  'start_time',
  'start_url',
  'storage',
];

/** A recording whose person was `$set` with an e-mail, a name and more, shared publicly. */
function privateSession(token: string, sessionId: string) {
  return [
    snapshotEvent({
      token,
      sessionId,
      distinctId: DISTINCT_ID,
      events: [rr.meta(T0, 'https://app.example.com/'), rr.click(T0 + 100)],
      properties: { $set: { email: EMAIL, name: NAME, plan: 'enterprise' }, $set_once: { first_seen: 'x' } },
    }),
  ];
}

describe('the public shared recording', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(NOW);
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Secrets');
    projectId = org.teams[0].id;
    token = (await t.http.get(`/api/projects/${projectId}`).set(owner.auth).expect(200)).body.api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('shows no person properties, e-mail, name or distinct id; the project route still does', async () => {
    const sessionId = newSessionId('private');
    await t.http.post('/s/').send(privateSession(token, sessionId)).expect(200);
    const recording = `/api/projects/${projectId}/session_recordings/${sessionId}`;
    const sharing = await t.http.get(`${recording}/sharing`).set(owner.auth).expect(200);
    await t.http.patch(`${recording}/sharing`).set(owner.auth).send({ enabled: true }).expect(200);

    // Members see who it is (so the data is really there to leak)...
    const full = (await t.http.get(recording).set(owner.auth).expect(200)).body;
    expect(full.distinct_id).toBe(DISTINCT_ID);
    expect(full.person).toMatchObject({
      name: EMAIL,
      properties: { email: EMAIL, name: NAME, plan: 'enterprise' },
    });

    // ...the share does not.
    const shared = await t.http.get(`/api/shared/${sharing.body.access_token}`).expect(200);
    expect(Object.keys(shared.body).sort()).toEqual(PUBLIC_FIELDS);
    const { person, distinct_id, viewed, viewers, ...publicFields } = full;
    void [person, distinct_id, viewed, viewers];
    expect(shared.body).toEqual(publicFields);
    for (const secret of [EMAIL, NAME, DISTINCT_ID, 'enterprise', 'first_seen', String(full.person.uuid)]) {
      expect(shared.text).not.toContain(secret);
    }
    expect(shared.body).toMatchObject({
      id: sessionId,
      click_count: 1,
      start_url: 'https://app.example.com/',
    });
    // The replay still has its snapshots.
    const snapshots = await readAllSnapshots(t.http, `/api/shared/${sharing.body.access_token}/snapshots`);
    expect(JSON.stringify(snapshots.events)).toContain('https://app.example.com/');
  });
});

describe('share tokens in the logs of the built service', () => {
  let db: { name: string; url: string };
  let service: ServiceProcess;
  let key: string;

  beforeAll(async () => {
    db = await cloneTemplate('logs');
    service = await startService(
      // The process runs on the real clock: a retention long enough that the recording of T0 is still kept.
      {
        DATABASE_URL: db.url,
        LOG_LEVEL: 'info',
        SCHEDULER_ENABLED: 'false',
        RECORDING_RETENTION_DAYS: '3650',
      },
      { timeoutMs: 50000 },
    );
    key = await bootstrapKey(service);
  }, 60000);
  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (db) await dropDatabase(db.name);
  });

  it('never logs a share token: paths and query parameters are redacted, Referer is not logged', async () => {
    const auth = { Authorization: `Bearer ${key}` };
    const org = (
      await rawRequest(service.base, '/api/organizations/', {
        method: 'POST',
        headers: auth,
        body: { name: 'Logs' },
      })
    ).json<{ teams: { id: number; api_token: string }[] }>();
    const [{ id: projectId, api_token: projectToken }] = org.teams;
    const sessionId = newSessionId('logged');
    expect(
      (
        await rawRequest(service.base, '/s/', {
          method: 'POST',
          body: privateSession(projectToken, sessionId),
        })
      ).status,
    ).toBe(200);
    const recording = `/api/projects/${projectId}/session_recordings/${sessionId}`;
    const accessToken = (await rawRequest(service.base, `${recording}/sharing`, { headers: auth })).json<{
      access_token: string;
    }>().access_token;
    expect(accessToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(
      (
        await rawRequest(service.base, `${recording}/sharing`, {
          method: 'PATCH',
          headers: auth,
          body: { enabled: true },
        })
      ).status,
    ).toBe(200);

    const probes: [string, number | null][] = [
      [`/api/shared/${accessToken}`, 200],
      [`/api/shared/${accessToken}/`, 200],
      [`/api/shared/${accessToken}/snapshots`, 200],
      [`/api/shared/${accessToken}/snapshots?source=blob_v2`, null],
      [`/API/SHARED/${accessToken}`, null],
      [`/shared/${accessToken}`, null],
      [`/embedded/${accessToken}?t=5`, null],
      [`/api/shared/${'x'.repeat(20)}${accessToken.slice(0, 10)}`, 404],
      [`/api/organizations/?limit=5&access_token=${accessToken}`, 200],
    ];
    for (const [i, [path, status]] of probes.entries()) {
      const res = await rawRequest(service.base, path, {
        headers: {
          ...(path.startsWith('/api/organizations') ? auth : {}),
          'X-Request-Id': `probe-${i}`,
          Referer: `https://site.example.com/embedded/${accessToken}`,
        },
      });
      if (status !== null) expect([path, res.status]).toEqual([path, status]);
      expect(res.status).toBeLessThan(500);
    }
    await sleep(300); // the request lines are flushed within LOG_FLUSH_MS

    const lines = service
      .logs()
      .filter((l) => typeof l.req === 'object' && /^probe-\d+$/.test(String((l.req as { id: string }).id)));
    expect(lines).toHaveLength(probes.length);
    const urls = lines.map((l) => (l.req as { url: string }).url).sort();
    expect(urls).toEqual(
      [
        '/api/shared/[redacted]',
        '/api/shared/[redacted]/',
        '/api/shared/[redacted]/snapshots',
        '/api/shared/[redacted]/snapshots?source=blob_v2',
        '/API/SHARED/[redacted]',
        '/shared/[redacted]',
        '/embedded/[redacted]?t=5',
        '/api/shared/[redacted]',
        '/api/organizations/?limit=5&access_token=[redacted]',
      ].sort(),
    );
    for (const line of lines) {
      // Request lines carry no headers at all, so the Referer (a shared page's URL) is not logged either.
      expect(Object.keys(line.req as object).sort()).toEqual(['id', 'ip', 'method', 'url']);
    }
    // Nowhere in the whole output: not in a request line, an error line or anything else.
    expect(service.stdout()).not.toContain(accessToken);
    expect(service.stdout()).not.toContain(accessToken.slice(0, 10));
    expect(service.stderr()).not.toContain(accessToken);
  }, 60000);
});
