/**
 * The replay pages over HTTP: the share page, the embeddable player, the recordings browser and their bundles —
 * status, content, content security policy and framing headers; a plain HTML 404 when there is nothing to show.
 * (Playback itself is tested in a real browser: replay-player.e2e-spec.ts.) Needs the built bundles (dist/web),
 * as every e2e run does after `npm run build`.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { playerCsp, plainPageCsp } from '../../src/replay/replay-pages.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

const T0 = Date.UTC(2026, 10, 20, 9, 0, 0);
/** The app's time: the day after the recordings, which would have expired by the real date (retention). */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const PERSON_DISTINCT_ID = 'person-distinct-id-7c2f';
const PERSON_EMAIL = 'ada.person@example.com';
/** A start URL that would end a script element if it were written into the page unescaped. */
const START_URL = 'https://shop.example.com/a?q=</script><script>alert(1)</script>&x=1';

interface PageData {
  access_token: string;
  embedded: boolean;
  recording: Record<string, unknown>;
}

/** The JSON the page hands its script. */
function pageData(html: string): PageData {
  const match = /<script type="application\/json" id="recording-data">([^<]*)<\/script>/.exec(html);
  if (!match) throw new Error(`no recording data in ${html}`);
  return JSON.parse(match[1]) as PageData;
}

function assetUrls(html: string): { script: string; stylesheet: string } {
  const script = /<script type="module" src="([^"]+)"><\/script>/.exec(html)?.[1];
  const stylesheet = /<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1];
  if (!script || !stylesheet) throw new Error(`no assets in ${html}`);
  return { script, stylesheet };
}

describe('replay pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;

  const path = (rest = '') => `/api/projects/${projectId}/session_recordings${rest}`;
  const record = async (sessionId: string) => {
    await t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token,
          sessionId,
          distinctId: PERSON_DISTINCT_ID,
          events: [rr.meta(T0, START_URL), rr.full(T0), rr.click(T0 + 2000), rr.mutation(T0 + 65_500)],
          properties: { $set: { email: PERSON_EMAIL } },
        }),
      ])
      .expect(200);
  };
  /** Records a recording, turns sharing on and returns its access token. */
  const share = async () => {
    const sessionId = newSessionId('page');
    await record(sessionId);
    const { body } = await t.http
      .patch(path(`/${sessionId}/sharing`))
      .set(owner.auth)
      .send({ enabled: true })
      .expect(200);
    return { sessionId, accessToken: (body as { access_token: string }).access_token };
  };

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(NOW);
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('/shared/:access_token', () => {
    it('is an HTML page with the player, the recording’s facts and no person data', async () => {
      const { sessionId, accessToken } = await share();
      const res = await t.http.get(`/shared/${accessToken}`).expect(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      const data = pageData(res.text);
      expect(data).toEqual({
        access_token: accessToken,
        embedded: false,
        recording: {
          start_time: new Date(T0).toISOString(),
          end_time: new Date(T0 + 65_500).toISOString(),
          recording_duration: 65,
          start_url: START_URL,
        },
      });
      // The person is not on the page in any form, nor is the session id.
      for (const secret of [PERSON_DISTINCT_ID, PERSON_EMAIL, sessionId, 'person', 'distinct_id']) {
        expect(res.text).not.toContain(secret);
      }
      // The start URL's markup is escaped inside the script element, so it cannot end it.
      expect(res.text.match(/<\/script>/g)).toHaveLength(2);
      expect(res.text).toContain('\\u003c/script\\u003e');
    });

    it('sends the player’s own content security policy and cannot be framed', async () => {
      const { accessToken } = await share();
      const res = await t.http.get(`/shared/${accessToken}`).expect(200);
      expect(res.headers['content-security-policy']).toBe(playerCsp("'none'"));
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy']).toContain("script-src 'self';");
      expect(res.headers['x-frame-options']).toBe('DENY');
      // The link is a credential: the page's requests to other sites (a recording's images) carry no referrer.
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    });

    it('serves its bundles from this service, cached for good, and nothing else under that path', async () => {
      const { accessToken } = await share();
      const { script, stylesheet } = assetUrls((await t.http.get(`/shared/${accessToken}`).expect(200)).text);
      expect(script).toMatch(/^\/replay\/assets\/shared-[A-Z0-9]+\.js$/);
      const js = await t.http.get(script).expect(200);
      expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      // The bundle holds the replayer itself (no CDN): rrweb's Replayer and the unpacking of packed events.
      const source = js.text ?? js.body.toString();
      expect(source).toContain('replayer-wrapper');
      expect(source).toContain('2024-10');
      expect(source).not.toMatch(/https?:\/\/(cdn|unpkg|jsdelivr)/);
      // With the licences of what it bundles.
      expect(source).toContain('rrweb 2.2.2 (MIT)');
      expect(source).toContain('fflate 0.8.3 (MIT)');
      // Sent gzip-compressed (built so) to a client that takes it, as is to one that does not.
      expect(js.headers['content-encoding']).toBe('gzip');
      expect(js.headers.vary).toBe('Accept-Encoding');
      const plain = await t.http.get(script).set('Accept-Encoding', 'identity').expect(200);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.text ?? plain.body.toString()).toBe(source);
      const css = await t.http.get(stylesheet).expect(200);
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
      expect(css.text).toContain('.player-controls');
      for (const bad of ['manifest.json', 'shared.js', '..%2Fmain.js', '..%2F..%2Fpackage.json', 'x.js']) {
        await t.http.get(`/replay/assets/${bad}`).expect(404);
      }
    });

    it('answers a plain HTML 404 when sharing is off, the token was replaced, the recording deleted, or unknown', async () => {
      const expectNotFound = async (url: string) => {
        const res = await t.http.get(url).expect(404);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.text).toContain('<h1>Recording not found</h1>');
        expect(res.text).not.toContain('<script');
        expect(res.headers['content-security-policy']).toBe(plainPageCsp("'none'"));
        expect(res.headers['x-frame-options']).toBe('DENY');
      };
      const off = await share();
      await t.http
        .patch(path(`/${off.sessionId}/sharing`))
        .set(owner.auth)
        .send({ enabled: false })
        .expect(200);
      await expectNotFound(`/shared/${off.accessToken}`);

      const refreshed = await share();
      const { body } = await t.http
        .post(path(`/${refreshed.sessionId}/sharing/refresh`))
        .set(owner.auth)
        .expect(200);
      await expectNotFound(`/shared/${refreshed.accessToken}`);
      await t.http.get(`/shared/${(body as { access_token: string }).access_token}`).expect(200);

      const deleted = await share();
      await t.http
        .delete(path(`/${deleted.sessionId}`))
        .set(owner.auth)
        .expect(204);
      await expectNotFound(`/shared/${deleted.accessToken}`);

      await expectNotFound(`/shared/${'x'.repeat(43)}`);
      await expectNotFound(`/shared/${'x'.repeat(500)}`);
    });
  });

  describe('/embedded/:access_token', () => {
    it('is the player without the page’s facts, framable by any site', async () => {
      const { accessToken } = await share();
      const res = await t.http.get(`/embedded/${accessToken}`).expect(200);
      expect(pageData(res.text)).toMatchObject({ access_token: accessToken, embedded: true });
      expect(res.text).toContain('<body class="embedded">');
      expect(res.headers['content-security-policy']).toBe(playerCsp('*'));
      expect(res.headers['content-security-policy']).toContain('frame-ancestors *');
      expect(res.headers['x-frame-options']).toBeUndefined();
    });

    it('answers a framable plain 404 for a token that shares nothing', async () => {
      const res = await t.http.get(`/embedded/${'y'.repeat(43)}`).expect(404);
      expect(res.text).toContain('Recording not found');
      expect(res.headers['content-security-policy']).toBe(plainPageCsp('*'));
      expect(res.headers['x-frame-options']).toBeUndefined();
    });
  });

  describe('/replay', () => {
    it('is the recordings browser page, with the player’s policy, not framable', async () => {
      const res = await t.http.get('/replay').expect(200);
      expect(res.text).toContain('<title>Session recordings</title>');
      expect(res.text).not.toContain('recording-data');
      expect(assetUrls(res.text).script).toMatch(/^\/replay\/assets\/replay-[A-Z0-9]+\.js$/);
      await t.http.get(assetUrls(res.text).script).expect(200);
      expect(res.headers['content-security-policy']).toBe(playerCsp("'none'"));
      expect(res.headers['x-frame-options']).toBe('DENY');
      await t.http.get('/replay/').expect(200);
    });
  });

  it('leaves every other route as it was: same-origin framing only, the service-wide policy', async () => {
    const res = await t.http.get('/healthz').expect(200);
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'self'");
    expect(res.headers['content-security-policy']).not.toContain('frame-ancestors *');
    const api = await t.http.get(`/api/projects/${projectId}`).set(owner.auth).expect(200);
    expect(api.headers['x-frame-options']).toBe('SAMEORIGIN');
  });
});
