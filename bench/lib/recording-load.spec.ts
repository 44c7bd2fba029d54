import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { connectionQueues, pageDom, sessionBodies, SESSION_SHAPE } from './recording-load.js';

type Event = {
  event: string;
  uuid: string;
  distinct_id: string;
  properties: {
    $session_id: string;
    $window_id: string;
    token: string;
    $snapshot_data: { type: number; timestamp: number }[];
  };
};
const decode = (body: Buffer) => JSON.parse(gunzipSync(body).toString('utf8')) as Event[];

describe('pageDom', () => {
  it('is a full snapshot of tens of KB with unique node ids', () => {
    const { node, maxId } = pageDom();
    const json = JSON.stringify(node);
    expect(json.length).toBeGreaterThan(20_000);
    expect(json.length).toBeLessThan(100_000);
    const ids = [...json.matchAll(/"id":(\d+)/g)].map((m) => Number(m[1]));
    expect(new Set(ids).size).toBe(ids.length);
    expect(Math.max(...ids)).toBe(maxId);
  });
});

describe('sessionBodies', () => {
  const spec = {
    token: 'phc_x',
    sessionId: 's-1',
    windowId: 'w-1',
    distinctId: 'd-1',
    t0: 1_763_719_200_000,
    seed: 3,
  };

  it('starts with meta and the full snapshot, then incremental requests in time order', () => {
    const bodies = sessionBodies(spec, pageDom());
    expect(bodies).toHaveLength(1 + SESSION_SHAPE.incrementalRequests);
    const first = bodies[0].json as Event[];
    expect(first[0].properties.$snapshot_data.map((e) => e.type)).toEqual([4, 2]);
    const later = bodies
      .slice(1)
      .flatMap((b) => (b.json as Event[]).flatMap((e) => e.properties.$snapshot_data));
    expect(later.every((e) => e.type === 3 || e.type === 6)).toBe(true);
    const all = bodies.flatMap((b) => (b.json as Event[]).flatMap((e) => e.properties.$snapshot_data));
    expect(all.map((e) => e.timestamp)).toEqual([...all.map((e) => e.timestamp)].sort((a, b) => a - b));
    for (const b of bodies) {
      expect(b.events).toBe((b.json as Event[]).reduce((a, e) => a + e.properties.$snapshot_data.length, 0));
    }
  });

  it('carries what capture needs on every event', () => {
    for (const e of sessionBodies(spec, pageDom()).flatMap((b) => b.json as Event[])) {
      expect(e).toMatchObject({ event: '$snapshot', distinct_id: 'd-1' });
      expect(e.properties).toMatchObject({ $session_id: 's-1', $window_id: 'w-1', token: 'phc_x' });
      expect(e.uuid).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('connectionQueues', () => {
  it('gives every connection new sessions, each event a new uuid, at least the asked number of requests', () => {
    const queues = connectionQueues({ token: 'phc_x', prefix: 'p', page: pageDom(8), t0: 0 }, 3, 7);
    expect(queues).toHaveLength(3);
    const uuids = new Set<string>();
    const sessionsByConnection = queues.map((q) => new Set(q.map((r) => r.sessionId)));
    for (const [c, queue] of queues.entries()) {
      expect(queue.length).toBeGreaterThanOrEqual(7);
      for (const request of queue) {
        const events = decode(request.body);
        expect(request.events).toBe(events.reduce((a, e) => a + e.properties.$snapshot_data.length, 0));
        for (const e of events) {
          expect(e.properties.$session_id).toBe(request.sessionId);
          expect(request.sessionId.startsWith(`p-c${c}-`)).toBe(true);
          uuids.add(e.uuid);
        }
      }
    }
    const total = queues.flat().reduce((a, r) => a + decode(r.body).length, 0);
    expect(uuids.size).toBe(total);
    const all = sessionsByConnection.flatMap((s) => [...s]);
    expect(new Set(all).size).toBe(all.length);
  });
});
