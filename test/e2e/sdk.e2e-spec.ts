/**
 * What the browser SDK calls besides capture, without a browser: remote config (JSON and script), the flags
 * endpoints in every body encoding, the project setting that switches recording, CORS, the SDK's scripts and
 * the refused analytics endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { INSUFFICIENT, missingScope, NOT_FOUND } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';

const require = createRequire(import.meta.url);
const SDK_DIST = join(dirname(require.resolve('posthog-js/package.json')), 'dist');
const SDK_VERSION = (require('posthog-js/package.json') as { version: string }).version;

/** The recording part of the remote config while the project records, as the SDK must receive it. */
const RECORDING_ON = {
  endpoint: '/s/',
  consoleLogRecordingEnabled: true,
  recorderVersion: 'v2',
  sampleRate: null,
  minimumDurationMilliseconds: null,
  linkedFlag: null,
  networkPayloadCapture: null,
  masking: null,
  urlTriggers: [],
  urlBlocklist: [],
  eventTriggers: [],
  triggerMatchType: null,
  scriptConfig: null,
  recordCanvas: false,
  canvasFps: null,
  canvasQuality: null,
};

const expectedConfig = (token: string, sessionRecording: unknown) => ({
  token,
  supportedCompression: ['gzip', 'gzip-js'],
  hasFeatureFlags: false,
  // The project's capture settings on PostHog's defaults.
  autocapture_opt_out: false,
  captureDeadClicks: false,
  capturePerformance: { network_timing: true, web_vitals: false },
  autocaptureExceptions: false,
  errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
  logs: { captureConsoleLogs: false },
  elementsChainAsString: true,
  sessionRecording,
  heatmaps: false,
  surveys: false,
  productTours: false,
  conversations: false,
  defaultIdentifiedOnly: true,
  siteApps: [],
});

/** The flags answer's own fields (besides the remote config). */
const FLAG_FIELDS = {
  errorsWhileComputingFlags: false,
  config: { enable_collect_everything: false },
  isAuthenticated: false,
  toolbarParams: {},
};

const INVALID_TOKEN = {
  type: 'authentication_error',
  code: 'invalid_api_key',
  detail:
    'Project API key invalid. You can find your project API key in the project settings (GET /api/projects/:id, api_token).',
  attr: null,
};
const NO_TOKEN = {
  type: 'authentication_error',
  code: 'no_api_key',
  detail:
    'No project API key provided. You can find your project API key in the project settings (GET /api/projects/:id, api_token).',
  attr: null,
};

describe('SDK routes: remote config, flags, recorder scripts, CORS', () => {
  let t: TestApp;
  let owner: TestUser;
  let project: { id: number; api_token: string };
  let token: string;
  let other: { id: number; api_token: string };

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    project = (await t.http.get(`/api/projects/${org.teams[0].id}`).set(owner.auth).expect(200)).body;
    token = project.api_token;
    const stranger = await t.factories.user();
    const otherOrg = await t.factories.organization(stranger);
    other = (await t.http.get(`/api/projects/${otherOrg.teams[0].id}`).set(stranger.auth).expect(200)).body;
  });

  afterAll(async () => {
    await t.close();
  });

  const setRecording = (on: boolean, id = project.id) =>
    t.http.patch(`/api/projects/${id}`).set(owner.auth).send({ session_recording_opt_in: on });

  describe('GET /array/:token/config', () => {
    it('answers the remote config field by field, recording on by default', async () => {
      const res = await t.http.get(`/array/${token}/config`).expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=60');
      expect(res.body).toEqual(expectedConfig(token, RECORDING_ON));
    });

    it('is per project: another token gets its own token back', async () => {
      const res = await t.http.get(`/array/${other.api_token}/config/`).expect(200);
      expect(res.body.token).toBe(other.api_token);
    });

    it('turns recording off (sessionRecording: false) when the project opts out, and on again', async () => {
      await setRecording(false).expect(200);
      expect((await t.http.get(`/array/${token}/config`).expect(200)).body).toEqual(
        expectedConfig(token, false),
      );
      await setRecording(true).expect(200);
      expect((await t.http.get(`/array/${token}/config`).expect(200)).body.sessionRecording).toEqual(
        RECORDING_ON,
      );
    });

    it('404 for an unknown token, a too long one, or a personal API key in its place', async () => {
      const notFound = { ...NOT_FOUND, detail: 'No project has this token.' };
      for (const bad of ['phc_unknown', `phc_${'x'.repeat(300)}`, owner.key]) {
        const res = await t.http.get(`/array/${encodeURIComponent(bad)}/config`).expect(404);
        expect(res.body).toEqual(notFound);
      }
    });
  });

  describe('GET /array/:token/config.js', () => {
    /** Runs the script as a browser would and returns what it left in window._POSTHOG_REMOTE_CONFIG. */
    const run = (script: string) => {
      const window: Record<string, unknown> = {};
      runInNewContext(script, { window });
      return window._POSTHOG_REMOTE_CONFIG as Record<string, unknown>;
    };

    it('is a script that registers {config, siteApps} under the token', async () => {
      const res = await t.http.get(`/array/${token}/config.js`).buffer(true).expect(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=60');
      const registry = run(res.text);
      expect(Object.keys(registry)).toEqual([token]);
      expect(registry[token]).toEqual({ config: expectedConfig(token, RECORDING_ON), siteApps: [] });
    });

    it('keeps configs of other tokens already on the page, and follows the project setting', async () => {
      await setRecording(false).expect(200);
      const res = await t.http.get(`/array/${token}/config.js`).buffer(true).expect(200);
      const window: Record<string, unknown> = { _POSTHOG_REMOTE_CONFIG: { other: { config: {} } } };
      runInNewContext(res.text, { window });
      const registry = window._POSTHOG_REMOTE_CONFIG as Record<
        string,
        { config: { sessionRecording: unknown } }
      >;
      expect(Object.keys(registry).sort()).toEqual(['other', token].sort());
      expect(registry[token].config.sessionRecording).toBe(false);
      await setRecording(true).expect(200);
    });

    it('404 (so the SDK falls back to the JSON config) for an unknown token', async () => {
      const res = await t.http.get('/array/phc_unknown/config.js').expect(404);
      expect(res.body).toEqual({ ...NOT_FOUND, detail: 'No project has this token.' });
    });
  });

  describe('POST /flags and /decide', () => {
    const body = () => JSON.stringify({ token, distinct_id: 'user-1', groups: {} });

    it('/flags?v=2&config=true: remote config and an empty set of flags (JSON body)', async () => {
      const res = await t.http
        .post('/flags/?v=2&config=true')
        .set('Content-Type', 'application/json')
        .send(body())
        .expect(200);
      expect(res.body).toEqual({
        ...expectedConfig(token, RECORDING_ON),
        featureFlags: {},
        featureFlagPayloads: {},
        flags: {},
        ...FLAG_FIELDS,
      });
    });

    it('/decide by protocol version: v1 a list, v2 an object, v3 payloads, v4 flag details', async () => {
      const decide = async (v: string) =>
        (await t.http.post(`/decide/${v}`).set('Content-Type', 'application/json').send(body()).expect(200))
          .body as Record<string, unknown>;
      const v1 = await decide('');
      expect(v1).toEqual({ ...expectedConfig(token, RECORDING_ON), featureFlags: [], ...FLAG_FIELDS });
      const v2 = await decide('?v=2');
      expect(v2).toEqual({ ...expectedConfig(token, RECORDING_ON), featureFlags: {}, ...FLAG_FIELDS });
      const v3 = await decide('?v=3');
      expect(v3).toEqual({
        ...expectedConfig(token, RECORDING_ON),
        featureFlags: {},
        featureFlagPayloads: {},
        ...FLAG_FIELDS,
      });
      const v4 = await decide('?v=4');
      expect(v4).toEqual({ ...v3, flags: {} });
    });

    it('accepts every encoding the SDK uses: gzip-js, native gzip, Content-Encoding, form base64, bare base64', async () => {
      const json = body();
      const gz = gzipSync(Buffer.from(json));
      const b64 = Buffer.from(json).toString('base64');
      const requests = [
        t.http.post('/flags/?v=2&compression=gzip-js').set('Content-Type', 'text/plain').send(gz),
        t.http.post('/flags/?v=2&compression=gzip').set('Content-Type', 'text/plain').send(gz),
        // (the test client would serialise a Buffer declared as JSON: it sends the bytes as they are here)
        t.http
          .post('/flags/?v=2')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', 'gzip')
          .serialize((bytes: unknown) => bytes as string)
          .send(gz as unknown as object),
        t.http
          .post('/decide/?v=3&compression=base64')
          .set('Content-Type', 'application/x-www-form-urlencoded')
          .send(`data=${encodeURIComponent(b64)}`),
        t.http.post('/decide/?v=3').set('Content-Type', 'text/plain').send(b64),
        t.http.post('/decide/?v=3').set('Content-Type', 'text/plain').send(`{"api_key": "${token}"}`),
      ];
      for (const res of await Promise.all(requests)) {
        expect(res.status).toBe(200);
        expect(res.body.token).toBe(token);
        expect(res.body.sessionRecording).toEqual(RECORDING_ON);
        expect(res.body.featureFlags).toEqual({});
      }
    });

    it('sessionRecording false when the project opts out', async () => {
      await setRecording(false).expect(200);
      const flags = await t.http.post('/flags/?v=2').set('Content-Type', 'application/json').send(body());
      const decide = await t.http.post('/decide/?v=3').set('Content-Type', 'application/json').send(body());
      expect(flags.body.sessionRecording).toBe(false);
      expect(decide.body.sessionRecording).toBe(false);
      await setRecording(true).expect(200);
    });

    it('401 invalid_api_key for an unknown token, 401 no_api_key without one', async () => {
      for (const path of ['/flags/?v=2', '/decide/?v=3']) {
        const unknown = await t.http
          .post(path)
          .set('Content-Type', 'application/json')
          .send({ token: 'phc_unknown', distinct_id: 'x' })
          .expect(401);
        expect(unknown.body).toEqual(INVALID_TOKEN);
        const none = await t.http
          .post(path)
          .set('Content-Type', 'application/json')
          .send({ distinct_id: 'x' });
        expect(none.status).toBe(401);
        expect(none.body).toEqual(NO_TOKEN);
        const empty = await t.http.post(path).expect(401);
        expect(empty.body).toEqual(NO_TOKEN);
      }
    });

    it('takes the token from the query when the body has none', async () => {
      const res = await t.http.post(`/flags/?v=2&token=${token}`).expect(200);
      expect(res.body.token).toBe(token);
    });

    it('400 for a body that is not JSON in any encoding, or broken gzip', async () => {
      const notJson = await t.http.post('/flags/?v=2').set('Content-Type', 'text/plain').send('{not json');
      expect(notJson.status).toBe(400);
      expect(notJson.body).toMatchObject({ type: 'validation_error', code: 'parse_error' });
      const badGzip = await t.http
        .post('/flags/?v=2&compression=gzip-js')
        .set('Content-Type', 'text/plain')
        .send(Buffer.from([0x1f, 0x8b, 1, 2, 3]));
      expect(badGzip.status).toBe(400);
      expect(badGzip.body).toMatchObject({ type: 'validation_error', attr: null });
    });

    it('413 beyond BODY_LIMIT', async () => {
      const res = await t.http
        .post('/flags/?v=2')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ token, pad: 'x'.repeat(1024 * 1024 + 10) }));
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ type: 'invalid_request', code: 'payload_too_large' });
    });
  });

  describe('PATCH /api/projects/:id', () => {
    it('changes session_recording_opt_in and name, returns the Project with the field; GET shows it', async () => {
      const res = await t.http
        .patch(`/api/projects/${project.id}`)
        .set(owner.auth)
        .send({ session_recording_opt_in: false, name: '  Web shop  ' })
        .expect(200);
      expect(res.body).toEqual({
        id: project.id,
        uuid: expect.any(String),
        organization: expect.any(String),
        name: 'Web shop',
        api_token: token,
        timezone: 'UTC',
        created_at: expect.any(String),
        session_recording_opt_in: false,
        session_recording_retention_period_days: null,
        // PostHog's required project keys (docs/compatibility.md).
        access_control: false,
        completed_snippet_onboarding: false,
        has_completed_onboarding_for: null,
        ingested_event: false,
        is_demo: false,
        anonymize_ips: false,
        autocapture_opt_out: false,
        autocapture_exceptions_opt_in: false,
        capture_console_log_opt_in: true,
        capture_performance_opt_in: true,
        heatmaps_opt_in: false,
        events_retention_period_days: null,
        default_experiment_stats_method: 'bayesian',
        // PostHog's team keys (docs/compatibility.md).
        project_id: project.id,
        updated_at: expect.any(String),
        effective_membership_level: 15,
        user_access_level: 'admin',
        secret_api_token: expect.stringMatching(/^phs_[A-Za-z0-9_-]{43}$/),
        secret_api_token_backup: null,
        live_events_token: null,
        has_group_types: false,
        group_types: [],
        person_on_events_querying_enabled: false,
        default_modifiers: {},
        product_intents: [],
        available_setup_task_ids: [],
      });
      const got = await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200);
      expect(got.body).toEqual(res.body);
      const [row] = await t.dataSource.query(
        'SELECT session_recording_opt_in, name FROM projects WHERE id = $1',
        [project.id],
      );
      expect(row).toEqual({ session_recording_opt_in: false, name: 'Web shop' });
      await setRecording(true).expect(200);
    });

    it('an empty body changes nothing; fields not sent keep their values', async () => {
      await t.http.patch(`/api/projects/${project.id}`).set(owner.auth).send({ name: 'Keep' }).expect(200);
      const res = await t.http.patch(`/api/projects/${project.id}`).set(owner.auth).send({}).expect(200);
      expect(res.body.name).toBe('Keep');
      expect(res.body.session_recording_opt_in).toBe(true);
    });

    it('concurrent changes of different fields both stay', async () => {
      await Promise.all([
        t.http.patch(`/api/projects/${project.id}`).set(owner.auth).send({ name: 'Concurrent' }).expect(200),
        setRecording(false).expect(200),
      ]);
      const got = await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200);
      expect(got.body).toMatchObject({ name: 'Concurrent', session_recording_opt_in: false });
      await setRecording(true).expect(200);
    });

    it('400 for bad values and unknown fields, naming the field; read-only fields are ignored', async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ session_recording_opt_in: 'yes' }, 'session_recording_opt_in', 'invalid_input'],
        [{ session_recording_opt_in: null }, 'session_recording_opt_in', 'invalid_input'],
        [{ name: '   ' }, 'name', 'min_length'],
        [{ name: 'x'.repeat(201) }, 'name', 'max_length'],
        [{ recording: true }, 'recording', 'unknown_field'],
      ];
      for (const [sent, attr, code] of cases) {
        const res = await t.http.patch(`/api/projects/${project.id}`).set(owner.auth).send(sent);
        expect([res.status, res.body.attr, res.body.code, res.body.type]).toEqual([
          400,
          attr,
          code,
          'validation_error',
        ]);
      }
      const read = await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200);
      expect(read.body.api_token).toBe(token);
      // Sent back as read, with changes: the read-only fields are ignored, never assigned.
      const res = await t.http
        .patch(`/api/projects/${project.id}`)
        .set(owner.auth)
        .send({
          ...read.body,
          api_token: 'phc_mine',
          timezone: 'Europe/Paris',
          updated_at: '2000-01-01T00:00:00Z',
        })
        .expect(200);
      // Only `updated_at` moves: the fields sent were written (with their values unchanged).
      expect(res.body).toEqual({ ...read.body, updated_at: expect.any(String) });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(read.body.updated_at));
    });

    it('401 without a key, 403 without project:write, 403 below admin, 404 for another organization', async () => {
      await t.http.patch(`/api/projects/${project.id}`).send({ name: 'x' }).expect(401);
      const readOnly = await t.factories.keyFor(owner, 'project:read');
      const denied = await t.http
        .patch(`/api/projects/${project.id}`)
        .set(readOnly)
        .send({ name: 'x' })
        .expect(403);
      expect(denied.body).toEqual(missingScope('project:write'));

      const org = (await t.http.get(`/api/projects/${project.id}`).set(owner.auth)).body
        .organization as string;
      const member = await t.factories.user();
      await t.factories.member(org, member, MembershipLevel.MEMBER);
      const low = await t.http
        .patch(`/api/projects/${project.id}`)
        .set(member.auth)
        .send({ name: 'x' })
        .expect(403);
      expect(low.body).toEqual(INSUFFICIENT);
      const admin = await t.factories.user();
      await t.factories.member(org, admin, MembershipLevel.ADMIN);
      await t.http
        .patch(`/api/projects/${project.id}`)
        .set(admin.auth)
        .send({ name: 'By admin' })
        .expect(200);

      const foreign = await t.http
        .patch(`/api/projects/${other.id}`)
        .set(owner.auth)
        .send({ name: 'x' })
        .expect(404);
      expect(foreign.body).toEqual(NOT_FOUND);
      await t.http.patch('/api/projects/99999999').set(owner.auth).send({ name: 'x' }).expect(404);
      await t.http.patch('/api/projects/abc').set(owner.auth).send({ name: 'x' }).expect(404);
    });
  });

  describe('CORS', () => {
    it('answers preflights of every SDK route for any origin with the headers asked for', async () => {
      for (const path of [
        '/s/',
        '/flags/?v=2',
        '/decide/?v=3',
        `/array/${token}/config`,
        '/static/lazy-recorder.js',
        '/e/',
      ]) {
        const res = await t.http
          .options(path)
          .set('Origin', 'https://shop.example.com')
          .set('Access-Control-Request-Method', 'POST')
          .set('Access-Control-Request-Headers', 'content-type,x-custom-header')
          .expect(204);
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, OPTIONS');
        expect(res.headers['access-control-allow-headers']).toBe('content-type,x-custom-header');
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
        expect(res.headers['access-control-max-age']).toBe('86400');
      }
    });

    it('a preflight asking for malformed header names gets Content-Type only', async () => {
      const res = await t.http
        .options('/s/')
        .set('Origin', 'https://shop.example.com')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'content-type; drop table')
        .expect(204);
      expect(res.headers['access-control-allow-headers']).toBe('Content-Type');
    });

    it('marks the responses of SDK routes, errors included, readable from any origin', async () => {
      const responses = [
        await t.http.get(`/array/${token}/config`).set('Origin', 'https://a.example'),
        await t.http.get('/array/phc_unknown/config').set('Origin', 'https://a.example'),
        await t.http.post('/flags/?v=2').set('Origin', 'https://a.example').send({ token: 'nope' }),
        await t.http.post('/s/').set('Origin', 'https://a.example').send({}),
        await t.http.get('/static/lazy-recorder.js').set('Origin', 'https://a.example'),
      ];
      for (const res of responses) {
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
      }
    });

    it('leaves /api and other paths alone', async () => {
      for (const path of ['/api/users/@me', '/healthz', '/sdk', '/static-other', '/stats']) {
        const res = await t.http.get(path).set(owner.auth).set('Origin', 'https://a.example');
        expect(res.headers['access-control-allow-origin']).not.toBe('*');
      }
      const preflight = await t.http
        .options('/api/organizations')
        .set('Origin', 'https://a.example')
        .set('Access-Control-Request-Method', 'POST');
      expect(preflight.headers['access-control-allow-origin']).not.toBe('*');
    });
  });

  describe('GET /static/:file (the SDK scripts from the installed posthog-js)', () => {
    const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

    it('serves the lazy recorder byte for byte, as JavaScript, with validators', async () => {
      const res = await t.http
        .get('/static/lazy-recorder.js')
        .buffer(true)
        .parse((r, cb) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => cb(null, Buffer.concat(chunks)));
        });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=3600');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers.etag).toBeDefined();
      expect(res.headers['last-modified']).toBe(
        statSync(join(SDK_DIST, 'lazy-recorder.js')).mtime.toUTCString(),
      );
      expect(sha(res.body as Buffer)).toBe(sha(readFileSync(join(SDK_DIST, 'lazy-recorder.js'))));
      const again = await t.http.get('/static/lazy-recorder.js').set('If-None-Match', res.headers.etag);
      expect(again.status).toBe(304);
    });

    it('caches for a year when the URL names the installed version (query or path)', async () => {
      const byQuery = await t.http.get(`/static/lazy-recorder.js?v=${SDK_VERSION}`).expect(200);
      expect(byQuery.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      const byPath = await t.http.get(`/static/${SDK_VERSION}/lazy-recorder.js`).expect(200);
      expect(byPath.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      const otherVersion = await t.http.get('/static/lazy-recorder.js?v=0.0.1').expect(200);
      expect(otherVersion.headers['cache-control']).toBe('public, max-age=3600');
      const otherPath = await t.http.get('/static/0.0.1/lazy-recorder.js').expect(200);
      expect(otherPath.headers['cache-control']).toBe('public, max-age=3600');
    });

    it("serves any SDK version's versioned paths (posthog-js 1.449.2's lazily loaded scripts) from the installed package", async () => {
      // `/static/${posthog.version}/${kind}.js`: loadExternalDependency with strict_script_versioning
      // (posthog-js lib/src/entrypoints/external-scripts-loader.js); the kinds the SDK loads on its defaults.
      for (const version of ['1.449.2', '1.450.0-beta.1', '1.300.0']) {
        for (const file of [
          'lazy-recorder.js',
          'surveys.js',
          'exception-autocapture.js',
          'dead-clicks-autocapture.js',
          'web-vitals.js',
          'tracing-headers.js',
        ]) {
          const res = await t.http
            .get(`/static/${version}/${file}`)
            .buffer(true)
            .parse((r, cb) => {
              const chunks: Buffer[] = [];
              r.on('data', (c: Buffer) => chunks.push(c));
              r.on('end', () => cb(null, Buffer.concat(chunks)));
            });
          expect(`${version}/${file} ${res.status}`).toBe(`${version}/${file} 200`);
          expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
          expect(res.headers['cache-control']).toBe('public, max-age=3600');
          expect(res.headers['x-content-type-options']).toBe('nosniff');
          expect(sha(res.body as Buffer)).toBe(sha(readFileSync(join(SDK_DIST, file))));
        }
      }
      const map = await t.http.head('/static/1.449.2/lazy-recorder.js.map').expect(200);
      expect(map.headers['content-type']).toBe('application/json; charset=utf-8');
      // Validators work on the versioned path as on the others.
      const first = await t.http.get('/static/1.449.2/surveys.js').expect(200);
      await t.http.get('/static/1.449.2/surveys.js').set('If-None-Match', first.headers.etag).expect(304);
      // A file outside the list stays 404 under any version.
      const toolbar = await t.http.get('/static/1.449.2/toolbar.js').expect(404);
      expect(toolbar.body).toEqual(NOT_FOUND);
    });

    it('404 for a version segment that is not a version string, whatever it hides', async () => {
      for (const version of [
        'latest',
        '1.449',
        'v1.449.2',
        '1.449.2.1',
        '01.449.2',
        '1.449.2-',
        '1.449.2+build',
        '1234567.0.0',
        `1.449.2-${'a'.repeat(100)}`,
        '%2E%2E',
        '..%2F..',
        '1.449.2%2F..',
        '1.449.2%5C..',
        '1.449.2%00',
        '%20',
      ]) {
        const res = await t.http.get(`/static/${version}/lazy-recorder.js`);
        expect(`${version} ${res.status}`).toBe(`${version} 404`);
        expect(res.body).toEqual({
          ...NOT_FOUND,
          detail: 'Not an SDK version: expected major.minor.patch, e.g. 1.449.2.',
        });
      }
    });

    it('serves every listed script and its source map', async () => {
      for (const file of [
        'array.js',
        'array.full.js',
        'posthog-recorder.js',
        'recorder.js',
        'recorder-v2.js',
      ]) {
        const res = await t.http.head(`/static/${file}`).expect(200);
        expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
        expect(Number(res.headers['content-length'])).toBe(readFileSync(join(SDK_DIST, file)).length);
      }
      const map = await t.http.head('/static/lazy-recorder.js.map').expect(200);
      expect(map.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it('404 for files outside the list, even ones the package has', async () => {
      for (const file of [
        'surveys-preview.js',
        'toolbar.js',
        'module.js',
        'array.d.ts',
        'lazy-recorder.d.ts',
        'package.json',
      ]) {
        const res = await t.http.get(`/static/${file}`).expect(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
    });

    it('no path traversal: encoded or raw, the name is only ever looked up in the list', async () => {
      const encoded = [
        '..%2Fpackage.json',
        '..%2F..%2F..%2Fpackage.json',
        '%2E%2E%2Fpackage.json',
        '..%5Cpackage.json',
      ];
      for (const name of encoded) {
        await t.http.get(`/static/${name}`).expect(404);
        await t.http.get(`/static/${SDK_VERSION}/${name}`).expect(404);
        await t.http.get(`/static/1.449.2/${name}`).expect(404);
      }
      // A raw "../" sent as is on the wire (no client-side normalisation).
      const server = t.app.getHttpServer();
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      for (const path of [
        '/static/../package.json',
        '/static/../../../../etc/passwd',
        `/static/${SDK_VERSION}/../package.json`,
        '/static/1.449.2/../../package.json',
        '/static/../1.449.2/lazy-recorder.js/../../package.json',
      ]) {
        const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
            let data = '';
            res.on('data', (c: Buffer) => (data += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
          });
          req.on('error', reject);
          req.end();
        });
        expect(status).toBe(404);
        expect(body).not.toContain('"name"');
        expect(body).not.toContain('root:');
      }
    });
  });

  describe('capture settings', () => {
    it("are PATCHable project fields with PostHog's defaults, served in the remote config", async () => {
      const fresh = (await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200)).body;
      expect(fresh).toMatchObject({
        anonymize_ips: false,
        autocapture_opt_out: false,
        autocapture_exceptions_opt_in: false,
        capture_console_log_opt_in: true,
        capture_performance_opt_in: true,
        heatmaps_opt_in: false,
        events_retention_period_days: null,
      });
      const changed = {
        anonymize_ips: true,
        autocapture_opt_out: true,
        autocapture_exceptions_opt_in: true,
        capture_console_log_opt_in: false,
        capture_performance_opt_in: false,
        heatmaps_opt_in: true,
        events_retention_period_days: 30,
      };
      try {
        const res = await t.http
          .patch(`/api/projects/${project.id}`)
          .set(owner.auth)
          .send(changed)
          .expect(200);
        expect(res.body).toMatchObject(changed);
        const config = (await t.http.get(`/array/${token}/config`).expect(200)).body;
        expect(config).toMatchObject({
          autocapture_opt_out: true,
          autocaptureExceptions: true,
          errorTracking: { autocaptureExceptions: true, suppressionRules: [] },
          capturePerformance: false,
          heatmaps: true,
        });
        expect(config.sessionRecording.consoleLogRecordingEnabled).toBe(false);
        const bad = await t.http
          .patch(`/api/projects/${project.id}`)
          .set(owner.auth)
          .send({ anonymize_ips: 'yes' })
          .expect(400);
        expect(bad.body).toMatchObject({ attr: 'anonymize_ips' });
      } finally {
        await t.http
          .patch(`/api/projects/${project.id}`)
          .set(owner.auth)
          .send({
            anonymize_ips: false,
            autocapture_opt_out: false,
            autocapture_exceptions_opt_in: false,
            capture_console_log_opt_in: true,
            capture_performance_opt_in: true,
            heatmaps_opt_in: false,
            events_retention_period_days: null,
          })
          .expect(200);
      }
    });
  });

  describe('analytics endpoints', () => {
    it('accept events cross-origin (200 {"status": 1}); the legacy /engage/ is refused explicitly', async () => {
      for (const path of ['/e/', '/e', '/i/v0/e/', '/batch/', '/capture/', '/track/']) {
        const res = await t.http
          .post(path)
          .set('Origin', 'https://shop.example.com')
          .set('Content-Type', 'application/json')
          .send({ event: '$pageview', distinct_id: 'sdk-1', properties: { token } });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ status: 1 });
        expect(res.headers['access-control-allow-origin']).toBe('*');
      }
      const res = await t.http
        .post('/engage/')
        .set('Origin', 'https://shop.example.com')
        .set('Content-Type', 'application/json')
        .send({ $distinct_id: 'sdk-1', $set: { plan: 'pro' }, $token: token });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({
        type: 'invalid_request',
        code: 'analytics_not_supported',
        attr: null,
      });
      expect(res.body.detail).toContain('$identify');
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });
  });
});
