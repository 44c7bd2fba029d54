/**
 * The bodies of the `capture-events` scenario: what posthog-js sends to `/e/?compression=gzip-js` — a gzip JSON
 * array of the events one browser queued since its last flush. Each connection plays visitors one after the
 * other; a visitor sends a few batches of mixed events: page views and page leaves, autocapture clicks (with
 * `$elements_chain` as current posthog-js sends it, or `$elements` as 1.x does), custom events, and (every other
 * visitor) an `$identify` from its anonymous id to a user id with `$set`. Every event has its own uuid, so
 * the rows of a load can be counted exactly afterwards.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';

export const EVENTS_PATH = '/e/?compression=gzip-js&ver=1.200.0';

export interface EventsPlan {
  token: string;
  /** Distinct ids and session ids start with it: the rows of one load are `distinct_id LIKE '<prefix>-%'`. */
  prefix: string;
  /** Time of the first event, ms (recent: the events must fall within the retention). */
  t0: number;
}

export interface EventsRequest {
  /** gzip of the JSON array. */
  body: Buffer;
  /** Events in the body. */
  events: number;
  sessionId: string;
}

/** Batches per visitor, and events per batch (posthog-js flushes its queue every few seconds). */
export const BATCHES_PER_VISITOR = 3;
export const EVENTS_PER_BATCH = 20;

const PAGES = ['/', '/pricing', '/docs/getting-started', '/blog/launch-week', '/signup', '/account/settings'];

/** A small deterministic generator (mulberry32), so a visitor's batches are the same on both sides. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = Record<string, unknown>;

/** The properties posthog-js puts on every event (device, page, library, session). */
function commonProperties(
  v: { anonId: string; sessionId: string; windowId: string; path: string },
  ms: number,
): Json {
  return {
    $os: 'Mac OS X',
    $os_version: '14.5.0',
    $browser: 'Chrome',
    $browser_version: 131,
    $device_type: 'Desktop',
    $timezone: 'Europe/Berlin',
    $browser_language: 'en-GB',
    $current_url: `https://shop.example.com${v.path}`,
    $host: 'shop.example.com',
    $pathname: v.path,
    $raw_user_agent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    $screen_height: 1117,
    $screen_width: 1728,
    $viewport_height: 959,
    $viewport_width: 1728,
    $lib: 'web',
    $lib_version: '1.200.0',
    $insert_id: randomUUID().slice(0, 16),
    $time: ms / 1000,
    distinct_id: v.anonId,
    $device_id: v.anonId,
    $initial_person_info: { r: '$direct', u: 'https://shop.example.com/' },
    $referrer: '$direct',
    $referring_domain: '$direct',
    $session_id: v.sessionId,
    $window_id: v.windowId,
    $pageview_id: `${v.sessionId}-pv`,
    $is_identified: false,
    $process_person_profile: true,
    $configured_session_timeout_ms: 1800000,
  };
}

function autocaptureProperties(rand: () => number, legacy: boolean): Json {
  const label = ['Add to cart', 'Checkout', 'Read more', 'Sign up'][Math.floor(rand() * 4)];
  const elements = [
    { tag_name: 'button', $el_text: label, attr__class: 'btn btn-primary', nth_child: 2, nth_of_type: 1 },
    { tag_name: 'div', attr__class: 'card-actions', nth_child: 3, nth_of_type: 2 },
    { tag_name: 'section', attr__id: 'products', nth_child: 1, nth_of_type: 1 },
    { tag_name: 'body', nth_child: 2, nth_of_type: 1 },
  ];
  const base = { $event_type: 'click', $ce_version: 1 };
  if (legacy) return { ...base, $elements: elements };
  return {
    ...base,
    $elements_chain:
      `button.btn.btn-primary:attr__class="btn btn-primary"nth-child="2"nth-of-type="1"text="${label}";` +
      'div.card-actions:attr__class="card-actions"nth-child="3"nth-of-type="2";' +
      'section:attr__id="products"attr_id="products"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  };
}

/**
 * The batches of one visitor: `BATCHES_PER_VISITOR` bodies of `EVENTS_PER_BATCH` events. The first batch
 * starts with a page view; an identified visitor's second batch holds its `$identify` (from then on its events
 * carry the user id, as posthog-js sends them).
 */
export function visitorBatches(plan: EventsPlan, visitor: string, seed: number): EventsRequest[] {
  const rand = random(seed);
  const anonId = `${plan.prefix}-${visitor}-anon`;
  const userId = `${plan.prefix}-${visitor}-user`;
  const identifies = seed % 2 === 0;
  const sessionId = `${plan.prefix}-${visitor}-s`;
  const windowId = `${plan.prefix}-${visitor}-w`;
  let ms = plan.t0;
  let path = PAGES[0];
  let distinctId = anonId;
  const out: EventsRequest[] = [];
  for (let b = 0; b < BATCHES_PER_VISITOR; b++) {
    const events: Json[] = [];
    for (let i = 0; i < EVENTS_PER_BATCH; i++) {
      ms += 200 + Math.floor(rand() * 800);
      const common = commonProperties({ anonId, sessionId, windowId, path }, ms);
      let name: string;
      let extra: Json;
      if (b === 1 && i === 0 && identifies) {
        name = '$identify';
        extra = {
          distinct_id: userId,
          $anon_distinct_id: anonId,
          $is_identified: true,
          $set: { email: `${visitor}@example.com`, plan: 'pro' },
          $set_once: { first_seen_plan: 'free' },
        };
        distinctId = userId;
      } else if (i === 0 || rand() < 0.2) {
        if (i > 0) path = PAGES[Math.floor(rand() * PAGES.length)];
        name = '$pageview';
        extra = { $current_url: `https://shop.example.com${path}`, $pathname: path, title: 'Example shop' };
      } else if (rand() < 0.55) {
        name = '$autocapture';
        extra = autocaptureProperties(rand, rand() < 0.3);
      } else if (rand() < 0.8) {
        name = ['product_viewed', 'cart_updated', 'search_performed'][Math.floor(rand() * 3)];
        extra = { product_id: `sku-${Math.floor(rand() * 1000)}`, price: Math.round(rand() * 10000) / 100 };
      } else {
        name = '$pageleave';
        extra = {};
      }
      const properties = {
        ...common,
        distinct_id: distinctId,
        $is_identified: distinctId === userId,
        ...extra,
      };
      events.push({
        uuid: randomUUID(),
        event: name,
        properties: { ...properties, token: plan.token },
        timestamp: new Date(ms).toISOString(),
      });
    }
    out.push({ body: gzipSync(JSON.stringify(events)), events: events.length, sessionId });
  }
  return out;
}

/** `connections` queues of at least `perConnection` bodies: each the batches of its visitors, in order. */
export function eventsQueues(
  plan: EventsPlan,
  connections: number,
  perConnection: number,
): EventsRequest[][] {
  const queues: EventsRequest[][] = [];
  for (let c = 0; c < connections; c++) {
    const queue: EventsRequest[] = [];
    for (let v = 0; queue.length < perConnection; v++) {
      queue.push(...visitorBatches(plan, `c${c}-v${v}`, c * 100_003 + v));
    }
    queues.push(queue);
  }
  return queues;
}
