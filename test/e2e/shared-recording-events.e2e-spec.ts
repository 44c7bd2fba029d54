/**
 * The public events read of a shared recording (`GET /api/shared/:access_token/events`): no key, the session's
 * events within the recording's time range (widened by 5 minutes), oldest first, paged, showing only the event's
 * name, time, page URL, clicked element and exception message — never the person, the distinct id or the
 * properties; 404 for a token that is not an enabled share.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { TransactionHost } from '../../src/database/transactions.js';
import { EventsRepository } from '../../src/events/events.repository.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { eventsToastReads } from '../support/toast-reads.js';
import { newSessionId, snapshotEvent } from '../support/recordings.js';
import { onCitus } from '../support/test-database.js';

describe('the events of a shared recording (public, bound to the share token)', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let token: string;
  let sessionId: string;
  let accessToken: string;
  const ids = {
    pageview: randomUUID(),
    click: randomUUID(),
    custom: randomUUID(),
    exception: randomUUID(),
    tooEarly: randomUUID(),
    otherSession: randomUUID(),
  };
  let T0: number;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    projectId = org.teams[0].id;
    token = org.teams[0].api_token;
    sessionId = newSessionId('shared-events');
    T0 = t.clock.now().getTime() - 600_000;
    await t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token,
          sessionId,
          distinctId: 'buyer@example.com',
          events: [
            { type: 4, timestamp: T0, data: { href: 'https://shop.example/', width: 800, height: 600 } },
            { type: 3, timestamp: T0 + 20_000, data: { source: 1, positions: [] } },
          ],
        }),
      ])
      .expect(200);
    const at = (ms: number) => new Date(T0 + ms).toISOString();
    const props = (extra: Record<string, unknown>) => ({
      $session_id: sessionId,
      $current_url: 'https://shop.example/cart',
      email: 'buyer@example.com',
      ...extra,
    });
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: [
          // Given newest first: the read answers oldest first.
          {
            event: '$exception',
            uuid: ids.exception,
            distinct_id: 'buyer@example.com',
            timestamp: at(9000),
            properties: props({ $exception_list: [{ type: 'TypeError', value: 'x is undefined' }] }),
          },
          {
            event: 'checkout started',
            uuid: ids.custom,
            distinct_id: 'buyer@example.com',
            timestamp: at(6000),
            properties: props({ plan: 'secret-plan' }),
          },
          {
            event: '$autocapture',
            uuid: ids.click,
            distinct_id: 'buyer@example.com',
            timestamp: at(3000),
            properties: props({
              $event_type: 'click',
              $elements_chain: 'span:text="Buy";button.cta:attr__id="buy-7"text="Buy now"',
            }),
          },
          {
            event: '$pageview',
            uuid: ids.pageview,
            distinct_id: 'buyer@example.com',
            timestamp: at(0),
            properties: props({ $current_url: 'https://shop.example/' }),
          },
          {
            event: 'long before',
            uuid: ids.tooEarly,
            distinct_id: 'buyer@example.com',
            timestamp: at(-3_600_000 + 60_000),
            properties: props({}),
          },
          {
            event: 'checkout started',
            uuid: ids.otherSession,
            distinct_id: 'buyer@example.com',
            timestamp: at(5000),
            properties: { $session_id: 'another-session' },
          },
        ],
      })
      .expect(200);
    accessToken = (
      await t.http
        .patch(`/api/projects/${projectId}/session_recordings/${sessionId}/sharing`)
        .set(owner.auth)
        .send({ enabled: true })
        .expect(200)
    ).body.access_token as string;
  });

  afterAll(async () => {
    await t?.close();
  });

  it('lists the session’s events oldest first, with only what the shared player shows', async () => {
    const res = await t.http.get(`/api/shared/${accessToken}/events`).expect(200);
    expect(res.body.count).toBe(4);
    expect(res.body.results).toEqual([
      {
        uuid: ids.pageview,
        event: '$pageview',
        timestamp: new Date(T0).toISOString(),
        current_url: 'https://shop.example/',
        event_type: null,
        element_tag: null,
        element_text: null,
        exception_message: null,
      },
      {
        uuid: ids.click,
        event: '$autocapture',
        timestamp: new Date(T0 + 3000).toISOString(),
        current_url: 'https://shop.example/cart',
        event_type: 'click',
        element_tag: 'span',
        element_text: 'Buy',
        exception_message: null,
      },
      {
        uuid: ids.custom,
        event: 'checkout started',
        timestamp: new Date(T0 + 6000).toISOString(),
        current_url: 'https://shop.example/cart',
        event_type: null,
        element_tag: null,
        element_text: null,
        exception_message: null,
      },
      {
        uuid: ids.exception,
        event: '$exception',
        timestamp: new Date(T0 + 9000).toISOString(),
        current_url: 'https://shop.example/cart',
        event_type: null,
        element_tag: null,
        element_text: null,
        exception_message: 'TypeError: x is undefined',
      },
    ]);
    // Nothing of the person or of what the site attached to the event.
    const text = JSON.stringify(res.body);
    for (const hidden of ['buyer@example.com', 'secret-plan', 'buy-7', 'distinct_id', 'properties']) {
      expect(text).not.toContain(hidden);
    }
  });

  it('pages, and bounds the offset', async () => {
    const first = await t.http.get(`/api/shared/${accessToken}/events`).query({ limit: 3 }).expect(200);
    expect((first.body.results as { uuid: string }[]).map((e) => e.uuid)).toEqual([
      ids.pageview,
      ids.click,
      ids.custom,
    ]);
    expect(first.body.next).toContain('offset=3');
    const second = await t.http
      .get(new URL(first.body.next as string).pathname + new URL(first.body.next as string).search)
      .expect(200);
    expect((second.body.results as { uuid: string }[]).map((e) => e.uuid)).toEqual([ids.exception]);
    const far = await t.http
      .get(`/api/shared/${accessToken}/events`)
      .query({ limit: 100, offset: 9950 })
      .expect(400);
    expect(far.body).toMatchObject({ type: 'validation_error', attr: 'offset' });
    await t.http.get(`/api/shared/${accessToken}/events`).query({ limit: 0 }).expect(400);
  });

  it('is 404 for an unknown token, and once sharing is off', async () => {
    const unknown = await t.http.get(`/api/shared/${'x'.repeat(20)}/events`).expect(404);
    expect(unknown.body).toMatchObject({ type: 'invalid_request', code: 'not_found' });
    await t.http.get(`/api/shared/${'y'.repeat(500)}/events`).expect(404);
    await t.http
      .patch(`/api/projects/${projectId}/session_recordings/${sessionId}/sharing`)
      .set(owner.auth)
      .send({ enabled: false })
      .expect(200);
    await t.http.get(`/api/shared/${accessToken}/events`).expect(404);
  });

  // On Citus the events are read on the workers, whose counters the coordinator's transaction does not see.
  (onCitus() ? it.skip : it)(
    "reads each event's stored properties once per page, however many of their keys it shows",
    async () => {
      // Six events of 400 KB of incompressible properties each, stored out of line (TOAST). Each `properties -> key`
      // of its own would read the whole stored value again: eight times per event before.
      const big = Array.from({ length: 6 }, () => ({
        uuid: randomUUID(),
        filler: randomBytes(200_000).toString('hex'),
      }));
      for (const [i, event] of big.entries()) {
        await t.http
          .post('/batch/')
          .send({
            api_key: token,
            batch: [
              {
                event: '$pageview',
                uuid: event.uuid,
                distinct_id: 'buyer@example.com',
                timestamp: new Date(T0 + 15_000 + i).toISOString(),
                properties: {
                  $session_id: sessionId,
                  $current_url: `https://shop.example/${i}`,
                  filler: event.filler,
                },
              },
            ],
          })
          .expect(200);
      }
      const events = t.app.get(EventsRepository);
      const {
        result: page,
        pages,
        fetched,
      } = await eventsToastReads(t.dataSource, t.app.get(TransactionHost), () =>
        events.listSharedOfSession(
          projectId,
          sessionId,
          new Date(0),
          new Date(T0 - 300_000),
          new Date(T0 + 320_000),
          100,
          0,
          10_000,
          64 * 1024 * 1024,
        ),
      );
      for (const [i, event] of big.entries()) {
        expect(page.rows.find((row) => row.uuid === event.uuid)?.properties).toEqual({
          $current_url: `https://shop.example/${i}`,
        });
      }
      // 2.4 MB of hex out of line: about 300 pages, each read once (the other events' properties are stored inline).
      expect(pages).toBeGreaterThan(250);
      expect(fetched).toBeGreaterThanOrEqual(0.8 * pages);
      expect(fetched).toBeLessThan(2 * pages);
    },
  );
});
