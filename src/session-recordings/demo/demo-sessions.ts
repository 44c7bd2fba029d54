/**
 * Realistic generated recordings for a newcomer's first look at the recordings API (`cli demo`): browser
 * sessions of a few persons, shaped as posthog-js sends them — `$snapshot` events carrying rrweb events, a
 * few per request — so they go through the real capture validation and ingestion.
 *
 * Each session visits 1–4 pages of a shop. A page load is a Meta event (with the URL) and a FullSnapshot, then
 * mouse moves, scrolls, clicks, form input, DOM mutations, console messages of every level, and idle gaps of
 * 6–40 seconds, so the recordings show click, keypress, console and active/inactive time figures.
 */
import { randomUUID } from 'node:crypto';

type Json = Record<string, unknown>;
type Rrweb = { type: number; timestamp: number; data: Json };

export interface DemoPersona {
  distinctId: string;
  properties: Json;
}

export const DEMO_PERSONAS: DemoPersona[] = [
  {
    distinctId: 'demo-ada',
    properties: { email: 'ada@example.com', name: 'Ada Lovelace', plan: 'pro', country: 'GB' },
  },
  {
    distinctId: 'demo-grace',
    properties: { email: 'grace@example.com', name: 'Grace Hopper', plan: 'team', country: 'US' },
  },
  {
    distinctId: 'demo-alan',
    properties: { email: 'alan@example.com', name: 'Alan Turing', plan: 'free', country: 'GB' },
  },
  { distinctId: 'demo-katherine', properties: { name: 'Katherine Johnson', plan: 'free', country: 'US' } },
  { distinctId: 'demo-anonymous-7f3a', properties: {} },
];

const PAGES = [
  '/',
  '/pricing',
  '/products/espresso-machine',
  '/products/grinder',
  '/cart',
  '/checkout',
  '/account/settings',
  '/blog/brewing-guide',
];

const CONSOLE_LEVELS = ['log', 'info', 'debug', 'warn', 'error', 'assert', 'countReset', 'trace'];
const CONSOLE_MESSAGES: Record<string, string> = {
  log: '"cart updated"',
  info: '"feature flags loaded"',
  debug: '"render took 12ms"',
  warn: '"Deprecated API: use fetchV2()"',
  error: '"TypeError: Cannot read properties of undefined (reading \'price\')"',
  assert: '"Assertion failed: total >= 0"',
  countReset: '"Count for \'clicks\' does not exist"',
  trace: '"console.trace"',
};

/** A small deterministic PRNG (mulberry32), so a seed reproduces the same sessions. */
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

function fullSnapshot(timestamp: number, path: string): Rrweb {
  const text = (id: number, textContent: string) => ({ type: 3, textContent, id });
  return {
    type: 2,
    timestamp,
    data: {
      node: {
        type: 0,
        id: 1,
        childNodes: [
          { type: 1, name: 'html', publicId: '', systemId: '', id: 2 },
          {
            type: 2,
            tagName: 'html',
            attributes: { lang: 'en' },
            id: 3,
            childNodes: [
              { type: 2, tagName: 'head', attributes: {}, id: 4, childNodes: [] },
              {
                type: 2,
                tagName: 'body',
                attributes: {},
                id: 5,
                childNodes: [
                  {
                    type: 2,
                    tagName: 'h1',
                    attributes: {},
                    id: 6,
                    childNodes: [text(7, `Demo shop — ${path}`)],
                  },
                  {
                    type: 2,
                    tagName: 'button',
                    attributes: { id: 'buy' },
                    id: 8,
                    childNodes: [text(9, 'Add to cart')],
                  },
                  {
                    type: 2,
                    tagName: 'input',
                    attributes: { type: 'text', name: 'search' },
                    id: 10,
                    childNodes: [],
                  },
                ],
              },
            ],
          },
        ],
      },
      initialOffset: { left: 0, top: 0 },
    },
  };
}

/** The rrweb events of one generated session, starting at `start` (epoch ms). */
export function demoSessionEvents(
  start: number,
  random: () => number,
  origin = 'https://shop.example.com',
): Rrweb[] {
  const events: Rrweb[] = [];
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  let now = start;
  const pages = int(1, 4);
  for (let p = 0; p < pages; p++) {
    const path = PAGES[int(0, PAGES.length - 1)];
    events.push({ type: 4, timestamp: now, data: { href: `${origin}${path}`, width: 1440, height: 900 } });
    events.push(fullSnapshot(now, path));
    const bursts = int(2, 6);
    for (let b = 0; b < bursts; b++) {
      // A burst of activity: moves, a scroll, maybe a click and typing.
      for (let m = 0; m < int(3, 12); m++) {
        now += int(50, 400);
        events.push({
          type: 3,
          timestamp: now,
          data: {
            source: 1,
            positions: [{ x: int(0, 1440), y: int(0, 900), id: 5, timeOffset: -int(0, 50) }],
          },
        });
      }
      now += int(100, 800);
      events.push({ type: 3, timestamp: now, data: { source: 3, id: 1, x: 0, y: int(0, 3000) } });
      if (random() < 0.7) {
        now += int(100, 1500);
        const interaction = random() < 0.85 ? 2 : random() < 0.5 ? 4 : 3; // click, else double click or context menu
        events.push({ type: 3, timestamp: now, data: { source: 2, type: 1, id: 8, x: 700, y: 420 } });
        events.push({ type: 3, timestamp: now + 80, data: { source: 2, type: 0, id: 8, x: 700, y: 420 } });
        events.push({
          type: 3,
          timestamp: now + 90,
          data: { source: 2, type: interaction, id: 8, x: 700, y: 420 },
        });
        events.push({
          type: 3,
          timestamp: now + 150,
          data: {
            source: 0,
            texts: [],
            attributes: [{ id: 9, attributes: { class: 'added' } }],
            removes: [],
            adds: [],
          },
        });
        now += 150;
      }
      if (random() < 0.5) {
        let text = '';
        for (const ch of 'espresso'.slice(0, int(3, 8))) {
          now += int(80, 300);
          text += ch;
          events.push({ type: 3, timestamp: now, data: { source: 5, id: 10, text, isChecked: false } });
        }
      }
      if (random() < 0.6) {
        const level = CONSOLE_LEVELS[int(0, CONSOLE_LEVELS.length - 1)];
        now += int(10, 300);
        events.push({
          type: 6,
          timestamp: now,
          data: {
            plugin: 'rrweb/console@1',
            payload: { level, payload: [CONSOLE_MESSAGES[level]], trace: [`${origin}/assets/app.js:120:14`] },
          },
        });
      }
      // Idle: reading the page, longer than the 5 s activity threshold.
      now += int(6_000, 40_000);
    }
    now += int(500, 3_000);
  }
  return events;
}

export interface DemoRequestOptions {
  token: string;
  sessions: number;
  /** End of the period the sessions fall in (epoch ms); they start up to 7 days before. */
  now: number;
  seed?: number;
}

/**
 * Capture requests (JSON bodies as posthog-js would post them to /s/) for `sessions` sessions: each session's
 * events are flushed in chunks of 40, several chunks per request, `$set` with the persona's properties.
 */
export function demoCaptureRequests(o: DemoRequestOptions): Json[][] {
  const random = prng(o.seed ?? Date.now());
  const requests: Json[][] = [];
  for (let s = 0; s < o.sessions; s++) {
    const persona = DEMO_PERSONAS[s % DEMO_PERSONAS.length];
    const sessionId = randomUUID();
    const windowId = randomUUID();
    const start = o.now - Math.floor(random() * 7 * 86_400_000) - 3_600_000;
    const events = demoSessionEvents(start, random);
    const chunks: Json[] = [];
    for (let i = 0; i < events.length; i += 40) {
      const data = events.slice(i, i + 40);
      chunks.push({
        event: '$snapshot',
        uuid: randomUUID(),
        distinct_id: persona.distinctId,
        timestamp: new Date(data[0].timestamp).toISOString(),
        properties: {
          token: o.token,
          $session_id: sessionId,
          $window_id: windowId,
          $snapshot_bytes: JSON.stringify(data).length,
          $snapshot_data: data,
          $lib: 'web',
          $lib_version: 'demo',
          ...(i === 0 && Object.keys(persona.properties).length ? { $set: persona.properties } : {}),
        },
      });
    }
    for (let i = 0; i < chunks.length; i += 3) requests.push(chunks.slice(i, i + 3));
  }
  return requests;
}
