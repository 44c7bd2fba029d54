/**
 * The capture scenario: one request of 40,000 `$snapshot` events of one session, as posthog-js shapes them
 * (gzip-js, one rrweb event each), stored by the service `runs` times, each into a new session. Measures the
 * wall time from sending to the 200 (decoding, validation, persons, keys, metadata and chunked snapshots in one
 * transaction) and the service's CPU time for it.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type pg from 'pg';
import type { Server } from './processes.js';
import type { CaptureResult } from './report.js';

export const CAPTURE_EVENTS = 40_000;

/** The gzip body of one capture request of `n` `$snapshot` events of `sessionId`. */
export function captureBody(token: string, sessionId: string, n: number): Buffer {
  const t0 = Date.UTC(2026, 10, 21, 10, 0, 0);
  const events = Array.from({ length: n }, (_, i) => ({
    event: '$snapshot',
    uuid: randomUUID(),
    distinct_id: 'bench-visitor',
    properties: {
      token,
      $session_id: sessionId,
      $window_id: `${sessionId}-w`,
      $snapshot_data: [
        {
          type: 3,
          timestamp: t0 + i * 50,
          data: { source: 1, positions: [{ x: i % 1280, y: 20, id: 5, timeOffset: 0 }] },
        },
      ],
    },
  }));
  return gzipSync(JSON.stringify(events));
}

export async function benchCapture(options: {
  service: Server;
  db: pg.Client;
  runs: number;
  log: (m: string) => void;
}): Promise<CaptureResult> {
  const { service, db, runs, log } = options;
  const { rows } = await db.query<{ api_token: string }>(
    'SELECT api_token FROM projects ORDER BY id LIMIT 1',
  );
  if (!rows.length) throw new Error('the bench database has no project');
  const wallMs: number[] = [];
  const cpuMs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const body = captureBody(rows[0].api_token, `bench-${randomUUID()}`, CAPTURE_EVENTS);
    const cpuBefore = service.cpuMs();
    const started = performance.now();
    const res = await fetch(`${service.url}/s/?compression=gzip-js`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'text/plain' },
    });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`capture answered ${res.status}: ${text.slice(0, 200)}`);
    wallMs.push(ms);
    cpuMs.push(service.cpuMs() - cpuBefore);
    log(`capture: ${CAPTURE_EVENTS} events stored in ${Math.round(ms)} ms`);
  }
  return { events: CAPTURE_EVENTS, wallMs, serviceCpuMs: cpuMs };
}
