import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { type ClientRequest, request as httpRequest } from 'node:http';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import {
  bootstrapKey,
  deploymentNodeOptions,
  rawRequest,
  type RawResponse,
  rssBytes,
  sampleRss,
  type ServiceProcess,
  startService,
} from '../support/service-process.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

/**
 * Work before authentication on /api: the body of a request is read only once its key has been verified,
 * bodies have a value-count limit, failed authentications are throttled per address, and large bodies have a
 * per-process concurrency cap (docs/limits-api.md).
 */

const MB = 1024 * 1024;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A key of the right shape that no one was ever given. */
const inventedKey = () => `phx_${Array.from(randomBytes(43), (b) => ALNUM[b % ALNUM.length]).join('')}`;

/** `{"name":[{},{},…]}`: `n` empty objects at depth 3 (n + 2 JSON values). */
const emptyObjects = (n: number) => `{"name":[${Array(n).fill('{}').join(',')}]}`;

const AUTHENTICATION_FAILED = {
  type: 'authentication_error',
  code: 'authentication_failed',
  detail: 'Invalid personal API key.',
  attr: null,
};

describe('/api bodies are read after authentication (in process)', () => {
  let t: TestApp;
  let owner: TestUser;
  const organizations = async () =>
    Number(
      ((await t.dataSource.query('SELECT count(*)::int AS n FROM organizations')) as { n: number }[])[0].n,
    );

  beforeAll(async () => {
    t = await createTestApp({ API_JSON_MAX_VALUES: '1000', API_AUTH_FAILURE_LIMIT: '3' });
    owner = await t.factories.user();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a malformed body with an invalid key is 401, not 400: the body is not parsed before the key is verified', async () => {
    const send = () =>
      t.http.post('/api/organizations').set('Content-Type', 'application/json').send('{"name": ');
    const invalid = await send().set('Authorization', `Bearer ${inventedKey()}`).expect(401);
    expect(invalid.body).toEqual(AUTHENTICATION_FAILED);
    expect(invalid.headers['www-authenticate']).toBe('Bearer');
    const none = await send().expect(401);
    expect(none.body.code).toBe('not_authenticated');
    // With a valid key the same body is parsed, and refused as before.
    const valid = await send().set(owner.auth).expect(400);
    expect(valid.body).toEqual({
      type: 'validation_error',
      code: 'parse_error',
      detail: 'Malformed request body: not valid JSON.',
      attr: null,
    });
  });

  it('more JSON values than API_JSON_MAX_VALUES is 413 with a valid key, and changes nothing', async () => {
    const before = await organizations();
    const res = await t.http
      .post('/api/organizations')
      .set(owner.auth)
      .set('Content-Type', 'application/json')
      .send(emptyObjects(999))
      .expect(413);
    expect(res.body).toEqual({
      type: 'invalid_request',
      code: 'payload_too_large',
      detail: 'Request body has too many JSON values: at most 1000.',
      attr: null,
    });
    // One value fewer is parsed, and refused by validation as any other wrong type.
    const within = await t.http
      .post('/api/organizations')
      .set(owner.auth)
      .set('Content-Type', 'application/json')
      .send(emptyObjects(998))
      .expect(400);
    expect(within.body.attr).toBe('name');
    expect(await organizations()).toBe(before);
    // Ordinary bodies are unaffected.
    await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Within limits' }).expect(201);
    expect(await organizations()).toBe(before + 1);
  });

  it('public /api routes keep answering without a key', async () => {
    const res = await t.http.get('/api/shared/no-such-token').expect(404);
    expect(res.body.code).toBe('not_found');
  });

  it('an address past API_AUTH_FAILURE_LIMIT failed authentications gets 429 until its window ends', async () => {
    // A user whose key authenticated over an hour ago, and the owner's key authenticating now; an hour on, the
    // failures of the tests above are forgotten too.
    const stranger = await t.factories.user();
    t.clock.advance(3_600_000);
    await t.http.get('/api/users/@me').set(owner.auth).expect(200);
    for (let i = 0; i < 3; i++) {
      const res = await t.http
        .get('/api/users/@me')
        .set('Authorization', i === 2 ? 'Basic x' : `Bearer ${inventedKey()}`)
        .expect(401);
      expect(res.body.code).toBe('authentication_failed');
    }
    const throttled = await t.http
      .post('/api/organizations')
      .set('Authorization', `Bearer ${inventedKey()}`)
      .send({ name: 'Never' })
      .expect(429);
    expect(throttled.body).toEqual({
      type: 'throttled_error',
      code: 'throttled',
      detail: 'Request was throttled. Expected available in 60 seconds.',
      attr: null,
    });
    expect(throttled.headers['retry-after']).toBe('60');
    // The key is not even looked up: a valid one from the same address that did not authenticate on this
    // process lately waits as well; one that did passes (people sharing the address keep working).
    t.clock.advance(45_000);
    const valid = await t.http.get('/api/users/@me').set(stranger.auth).expect(429);
    expect(valid.headers['retry-after']).toBe('15');
    const known = await t.http.get('/api/users/@me').set(owner.auth).expect(200);
    expect(known.body.email).toBe(owner.email);
    // Requests without a key, and public routes, are not affected.
    expect((await t.http.get('/api/users/@me').expect(401)).body.code).toBe('not_authenticated');
    await t.http.get('/api/shared/no-such-token').expect(404);
    // Once the window is over, the address may try again.
    t.clock.advance(15_000);
    const me = await t.http.get('/api/users/@me').set(owner.auth).expect(200);
    expect(me.body.email).toBe(owner.email);
    expect((await t.http.get('/api/users/@me').set('Authorization', `Bearer ${inventedKey()}`)).status).toBe(
      401,
    );
  });
});

/** Starts a request whose body is `total` bytes long and sends only `first` of them; `finish` sends the rest. */
function heldUpload(
  base: string,
  path: string,
  headers: Record<string, string>,
  body: string,
  first: number,
): { request: ClientRequest; response: Promise<RawResponse>; finish(): void } {
  let request!: ClientRequest;
  const response = new Promise<RawResponse>((resolve, reject) => {
    request = httpRequest(
      `${base}${path}`,
      {
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            json: <T>() => JSON.parse(text) as T,
          }),
        );
      },
    );
    request.on('error', reject);
  });
  request.write(body.slice(0, first));
  return { request, response, finish: () => request.end(body.slice(first)) };
}

describe('the built service under a 256 MB heap: /api before authentication', () => {
  let database: { name: string; url: string };
  let service: ServiceProcess;
  let auth: Record<string, string>;

  beforeAll(async () => {
    database = await cloneTemplate('api_auth_process');
    service = await startService({
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      // Every invented key is looked up (no throttle): the worst case for work before authentication.
      API_AUTH_FAILURE_LIMIT: '0',
      API_LARGE_BODY_CONCURRENCY: '2',
      NODE_OPTIONS: deploymentNodeOptions(),
    });
    auth = { Authorization: `Bearer ${await bootstrapKey(service)}` };
    // Warm up: code loaded, pool open.
    for (let i = 0; i < 3; i++) {
      expect((await rawRequest(service.base, '/api/users/@me', { headers: auth })).status).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    if (database) await dropDatabase(database.name);
  });

  const post = (headers: Record<string, string>, raw: Buffer) =>
    rawRequest(service.base, '/api/organizations', {
      method: 'POST',
      raw,
      headers: { 'Content-Type': 'application/json', ...headers },
    });

  it('20 concurrent 1 MB bodies of 349,000 empty objects with invented keys, 3 rounds: 401 each, RSS bounded', async () => {
    const body = Buffer.from(emptyObjects(349_000));
    expect(body.length).toBeGreaterThan(MB - 5000);
    expect(body.length).toBeLessThanOrEqual(MB);
    const before = rssBytes(service.child.pid!);
    const rss = sampleRss(service.child.pid!);
    try {
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => post({ Authorization: `Bearer ${inventedKey()}` }, body)),
        );
        for (const res of answers) {
          expect(res.status).toBe(401);
          expect(res.json()).toEqual(AUTHENTICATION_FAILED);
        }
      }
    } finally {
      rss.stop();
    }
    expect(service.child.exitCode).toBeNull();
    // The bodies were never parsed: 60 MB of them (and the 20 million objects they describe) left no trace.
    expect(rss.max - before).toBeLessThan(64 * MB);
    expect(rss.max).toBeLessThan(384 * MB);
    // A valid request still answers.
    const created = await post(auth, Buffer.from(JSON.stringify({ name: 'After the storm' })));
    expect(created.status).toBe(201);
    expect(created.json<{ name: string }>().name).toBe('After the storm');
  }, 120_000);

  it('the same bodies with a valid key: 413 (too many values) or 503 (large-body cap), never a crash', async () => {
    const body = Buffer.from(emptyObjects(349_000));
    const rss = sampleRss(service.child.pid!);
    let answers: RawResponse[];
    try {
      answers = await Promise.all(Array.from({ length: 20 }, () => post(auth, body)));
    } finally {
      rss.stop();
    }
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 413 || s === 503)).toBe(true);
    for (const res of answers.filter((r) => r.status === 413)) {
      expect(res.json<{ code: string; detail: string }>()).toMatchObject({
        code: 'payload_too_large',
        detail: 'Request body has too many JSON values: at most 100000.',
      });
    }
    expect(rss.max).toBeLessThan(384 * MB);
    expect(service.child.exitCode).toBeNull();
    expect((await rawRequest(service.base, '/api/users/@me', { headers: auth })).status).toBe(200);
  }, 120_000);

  it('large bodies past API_LARGE_BODY_CONCURRENCY get 503 with Retry-After; small ones are not capped', async () => {
    const large = JSON.stringify({ name: 'Large', pad: 'x'.repeat(100 * 1024) });
    // Large uploads hold both slots while their bodies are still being sent: six of them, as one of them at times
    // reaches the gate only once its body is complete (on a busy machine); those past the two slots are refused.
    const held = [1, 2, 3, 4, 5, 6].map(() =>
      heldUpload(service.base, '/api/organizations', auth, large, 1000),
    );
    let refused: RawResponse | undefined;
    for (let i = 0; i < 50 && refused?.status !== 503; i++) {
      // The held uploads take their slots as soon as the server has their headers.
      refused = await post(auth, Buffer.from(large));
      if (refused.status !== 503) await new Promise((r) => setTimeout(r, 50));
    }
    expect(refused!.status).toBe(503);
    expect(refused!.headers['retry-after']).toBe('1');
    expect(refused!.json()).toEqual({
      type: 'server_error',
      code: 'unavailable',
      detail: 'Too many large request bodies are being processed at once. Retry after 1 second.',
      attr: null,
    });
    // A small body is not capped, and an invalid key is refused before any slot is asked for.
    const small = await post(auth, Buffer.from(JSON.stringify({ name: 'Small' })));
    expect(small.status).toBe(201);
    const unknown = await post({ Authorization: `Bearer ${inventedKey()}` }, Buffer.from(large));
    expect(unknown.status).toBe(401);
    // The held uploads complete (their unknown field `pad` is refused, or they were refused at the gate) and give
    // their slots back.
    for (const h of held) h.finish();
    const finished = await Promise.all(held.map((h) => h.response));
    for (const res of finished) {
      if (res.status === 400) expect(res.json<{ attr: string }>().attr).toBe('pad');
      else expect(res.status).toBe(503);
    }
    const again = await post(auth, Buffer.from(large));
    expect(again.status).toBe(400);
  }, 60_000);
});
