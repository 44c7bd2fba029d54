/**
 * Recording capture load as posthog-js sends it: POST /s/?compression=gzip-js with a gzip body holding a JSON
 * array of `$snapshot` events, each carrying `$snapshot_data` (rrweb events), `$session_id`, `$window_id`,
 * `distinct_id`, the project token and a unique `uuid`.
 *
 * A session is a sequence of requests: the first holds the meta event (rrweb type 4) and the full snapshot
 * (type 2: the DOM tree of a product page, tens of KB of JSON) followed by the first incremental events; the
 * next ones hold incremental events only (type 3: mouse moves, clicks, scrolls, inputs, DOM mutations; a few
 * console messages). Every session is new (its own session, window and anonymous distinct id), and every event
 * has its own uuid, so the service never skips a request as a re-sent one.
 *
 * The bodies are built and compressed before the load starts, so the load generator spends its CPU sending, not
 * building.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/** rrweb events of one request: what the events/s figures count. */
export interface CaptureRequest {
  /** gzip of the JSON body. */
  body: Buffer;
  /** rrweb events in the body. */
  events: number;
  sessionId: string;
}

export interface SessionShape {
  /** Requests of incremental events after the first request of a session. */
  incrementalRequests: number;
  /** rrweb incremental events in each of those requests (and after the full snapshot of the first). */
  eventsPerRequest: number;
}

export const SESSION_SHAPE: SessionShape = { incrementalRequests: 4, eventsPerRequest: 60 };

/** A small deterministic PRNG (mulberry32): the same page and the same event mix on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'account add basket blue buy cart checkout choose colour compare cotton delivery details discount easy ' +
  'free gift help home jacket large linen medium menu new order organic pay price product quality questions ' +
  'reviews return search shipping shirt shoes shop size small sign sale style summer support terms total track ' +
  'trousers view warranty wishlist winter your'
).split(' ');
const CLASSES = (
  'container row col flex grid item card card-body btn btn-primary btn-link nav nav-item header footer ' +
  'price badge title subtitle text-muted hidden md:block lg:flex px-4 py-2 mt-2 mb-4 rounded shadow'
).split(' ');

interface RrwebNode {
  type: number;
  id: number;
  tagName?: string;
  attributes?: Record<string, string>;
  childNodes?: RrwebNode[];
  textContent?: string;
  name?: string;
  publicId?: string;
  systemId?: string;
}

/**
 * The serialised DOM (rrweb node tree) of a product listing page: head with meta and styles, a header with
 * navigation, a grid of product cards (image, title, price, buttons), a footer. About `cards` × 1 KB of JSON.
 */
export function pageDom(cards = 36, seed = 7): { node: RrwebNode; maxId: number } {
  const rand = prng(seed);
  let id = 0;
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)];
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const classes = (n: number) => Array.from({ length: n }, () => pick(CLASSES)).join(' ');
  const text = (content: string): RrwebNode => ({ type: 3, textContent: content, id: ++id });
  const el = (tagName: string, attributes: Record<string, string>, children: RrwebNode[] = []): RrwebNode => {
    const node: RrwebNode = { type: 2, tagName, attributes, childNodes: [], id: ++id };
    node.childNodes = children;
    return node;
  };
  const card = (n: number) =>
    el('div', { class: `card ${classes(3)}`, 'data-product-id': String(1000 + n) }, [
      el('a', { href: `/products/${words(2).replace(/ /g, '-')}-${n}`, class: classes(2) }, [
        el('img', {
          src: `https://cdn.shop.example.com/img/${n}-${Math.floor(rand() * 1e6)}.webp`,
          alt: words(4),
          width: '320',
          height: '320',
          loading: 'lazy',
        }),
      ]),
      el('div', { class: `card-body ${classes(2)}` }, [
        el('h3', { class: 'title' }, [text(words(3 + Math.floor(rand() * 4)))]),
        el('p', { class: 'text-muted' }, [text(words(8 + Math.floor(rand() * 10)))]),
        el('span', { class: 'price' }, [text(`€${(5 + rand() * 200).toFixed(2)}`)]),
        el('button', { class: 'btn btn-primary', type: 'button', 'aria-label': `Add ${n} to cart` }, [
          text('Add to cart'),
        ]),
      ]),
    ]);
  const documentType: RrwebNode = { type: 1, name: 'html', publicId: '', systemId: '', id: ++id };
  const head = el('head', {}, [
    el('meta', { charset: 'utf-8' }),
    el('meta', { name: 'viewport', content: 'width=device-width, initial-scale=1' }),
    el('title', {}, [text('Shop — new arrivals')]),
    el('link', { rel: 'stylesheet', href: 'https://cdn.shop.example.com/css/app.4f9a1c.css' }),
    el('style', {}, [
      text(
        Array.from(
          { length: 40 },
          (_, i) =>
            `.${pick(CLASSES).replace(':', '\\:')}-${i}{margin:${i % 8}px;color:#${(i * 2654435761) % 0xffffff}}`,
        ).join(''),
      ),
    ]),
  ]);
  const nav = el(
    'nav',
    { class: 'nav header' },
    Array.from({ length: 8 }, (_, i) =>
      el('a', { class: 'nav-item', href: `/c/${pick(WORDS)}-${i}` }, [text(words(2))]),
    ),
  );
  const grid = el(
    'main',
    { class: 'grid container' },
    Array.from({ length: cards }, (_, i) => card(i)),
  );
  const footer = el(
    'footer',
    { class: 'footer' },
    Array.from({ length: 12 }, () => el('p', { class: 'text-muted' }, [text(words(10))])),
  );
  const form = el('form', { class: 'row', action: '/search' }, [
    el('input', { type: 'search', name: 'q', placeholder: 'Search', id: 'search' }),
    el('input', { type: 'email', name: 'email', placeholder: 'Newsletter' }),
  ]);
  const body = el('body', { class: 'page' }, [nav, form, grid, footer]);
  const html = el('html', { lang: 'en' }, [head, body]);
  return { node: { type: 0, childNodes: [documentType, html], id: 0 }, maxId: id };
}

type RrwebEvent = { type: number; timestamp: number; data: unknown };

/** `n` incremental events after `t`, about 50 ms apart, as a user browsing the page makes them. */
export function incrementalEvents(rand: () => number, t: number, n: number, maxId: number): RrwebEvent[] {
  const out: RrwebEvent[] = [];
  const node = () => 1 + Math.floor(rand() * maxId);
  for (let i = 0; i < n; i++) {
    t += 20 + Math.floor(rand() * 60);
    const r = rand();
    let data: unknown;
    if (r < 0.45) {
      data = {
        source: 1,
        positions: Array.from({ length: 3 + Math.floor(rand() * 8) }, (_, k) => ({
          x: Math.floor(rand() * 1440),
          y: Math.floor(rand() * 900),
          id: node(),
          timeOffset: -k * 16,
        })),
      };
    } else if (r < 0.6) {
      data = { source: 3, id: 1, x: 0, y: Math.floor(rand() * 6000) };
    } else if (r < 0.7) {
      data = { source: 2, type: 2, id: node(), x: Math.floor(rand() * 1440), y: Math.floor(rand() * 900) };
    } else if (r < 0.8) {
      data = {
        source: 5,
        text: WORDS.slice(0, 1 + Math.floor(rand() * 4)).join(' '),
        isChecked: false,
        id: node(),
      };
    } else if (r < 0.97) {
      const parent = node();
      data = {
        source: 0,
        texts: [{ id: node(), value: `${Math.floor(rand() * 9)} items` }],
        attributes: [
          { id: node(), attributes: { class: `badge ${CLASSES[Math.floor(rand() * CLASSES.length)]}` } },
        ],
        removes: rand() < 0.5 ? [{ parentId: parent, id: node() }] : [],
        adds: [
          {
            parentId: parent,
            nextId: null,
            node: {
              type: 2,
              tagName: 'div',
              attributes: { class: 'toast shadow rounded', role: 'status' },
              childNodes: [],
              id: maxId + i + 1,
            },
          },
        ],
      };
    } else {
      out.push({
        type: 6,
        timestamp: t,
        data: {
          plugin: 'rrweb/console@1',
          payload: { level: rand() < 0.7 ? 'log' : 'warn', trace: [], payload: ['"cart updated"', '3'] },
        },
      });
      continue;
    }
    out.push({ type: 3, timestamp: t, data });
  }
  return out;
}

/** One `$snapshot` event as posthog-js captures it. */
function snapshotEvent(
  token: string,
  session: { sessionId: string; windowId: string; distinctId: string },
  events: RrwebEvent[],
) {
  return {
    event: '$snapshot',
    uuid: randomUUID(),
    distinct_id: session.distinctId,
    timestamp: new Date(events[events.length - 1].timestamp).toISOString(),
    properties: {
      $snapshot_data: events,
      $session_id: session.sessionId,
      $window_id: session.windowId,
      $snapshot_bytes: 0,
      $lib: 'web',
      $lib_version: '1.434.18',
      token,
    },
  };
}

export interface SessionSpec {
  token: string;
  sessionId: string;
  windowId: string;
  distinctId: string;
  /** Epoch ms of the session's first event. */
  t0: number;
  /** PRNG seed of the session's events. */
  seed: number;
}

/**
 * The JSON bodies (as arrays of `$snapshot` events) of one session: first the meta event and the full
 * snapshot with the first incremental events, then `shape.incrementalRequests` requests of incremental
 * events, a few seconds apart.
 */
export function sessionBodies(
  spec: SessionSpec,
  page: { node: unknown; maxId: number },
  shape: SessionShape = SESSION_SHAPE,
): { json: unknown[]; events: number }[] {
  const rand = prng(spec.seed);
  const meta: RrwebEvent = {
    type: 4,
    timestamp: spec.t0,
    data: { href: `https://shop.example.com/c/new-arrivals?ref=${spec.seed % 97}`, width: 1440, height: 900 },
  };
  const full: RrwebEvent = {
    type: 2,
    timestamp: spec.t0 + 1,
    data: { node: page.node, initialOffset: { left: 0, top: 0 } },
  };
  const first = incrementalEvents(rand, spec.t0 + 1, shape.eventsPerRequest, page.maxId);
  const out = [
    {
      json: [snapshotEvent(spec.token, spec, [meta, full]), snapshotEvent(spec.token, spec, first)],
      events: 2 + first.length,
    },
  ];
  let t = first[first.length - 1].timestamp;
  for (let r = 0; r < shape.incrementalRequests; r++) {
    t += 2000 + Math.floor(rand() * 3000);
    // posthog-js flushes its buffer as one `$snapshot` event, sometimes two when a flush was queued.
    const events = incrementalEvents(rand, t, shape.eventsPerRequest, page.maxId);
    t = events[events.length - 1].timestamp;
    const split = rand() < 0.3 ? Math.floor(events.length / 2) : events.length;
    const json = [snapshotEvent(spec.token, spec, events.slice(0, split))];
    if (split < events.length) json.push(snapshotEvent(spec.token, spec, events.slice(split)));
    out.push({ json, events: events.length });
  }
  return out;
}

/** The project token, the run's session id prefix and the page every session records. */
export interface LoadPlan {
  token: string;
  /** Prefix of every session id of this load (letters, digits, '-'), so its rows can be found and counted. */
  prefix: string;
  page: { node: unknown; maxId: number };
  shape?: SessionShape;
  /** Epoch ms of the first session. */
  t0: number;
}

/**
 * `connections` queues of gzip bodies, each at least `requestsPerConnection` long: each connection records new
 * sessions one after the other (a session's requests in order). Every session, window, distinct id and event
 * uuid is new.
 */
export function connectionQueues(
  plan: LoadPlan,
  connections: number,
  requestsPerConnection: number,
): CaptureRequest[][] {
  const shape = plan.shape ?? SESSION_SHAPE;
  const perSession = 1 + shape.incrementalRequests;
  const sessions = Math.max(1, Math.ceil(requestsPerConnection / perSession));
  return Array.from({ length: connections }, (_, c) => {
    const queue: CaptureRequest[] = [];
    for (let s = 0; s < sessions; s++) {
      const sessionId = `${plan.prefix}-c${c}-s${s}`;
      const spec: SessionSpec = {
        token: plan.token,
        sessionId,
        windowId: randomUUID(),
        distinctId: randomUUID(),
        t0: plan.t0 + (c * sessions + s) * 60_000,
        seed: c * 100_003 + s,
      };
      for (const request of sessionBodies(spec, plan.page, shape)) {
        queue.push({ body: gzipSync(JSON.stringify(request.json)), events: request.events, sessionId });
      }
    }
    return queue;
  });
}
