/**
 * The load generator of the capture scenarios: `connections` keep-alive connections, each sending its own
 * queue of pre-built gzip bodies one after the other (a session's requests in order) until the time is up.
 * Not autocannon: each connection must walk its own sequence of sessions, and must stop rather than send a body
 * twice (a re-sent body is skipped by the service as duplicates, which would falsify the figures).
 */
import { Agent, request } from 'node:http';
import type { CaptureRequest } from './recording-load.js';

export const CAPTURE_PATH = '/s/?compression=gzip-js';

export interface CaptureLoadFigures {
  requests: number;
  errors: number;
  /** Wall time from the first request sent to the last answer, s. */
  elapsedSec: number;
  rps: number;
  /** rrweb events of the answered (2xx) requests per second. */
  eventsPerSec: number;
  /** Compressed request bytes of the answered requests per second, MB (10^6 bytes). */
  mbPerSec: number;
  p50: number;
  p99: number;
  /** rrweb events of the answered requests, and their sessions. */
  events: number;
  sessions: Set<string>;
  /** A connection ran out of pre-built bodies before the time was up. */
  exhausted: boolean;
  /** The first error answers, for the log. */
  errorSamples: string[];
}

/** The value at `q` (0..1) of sorted values, by the nearest-rank method. */
export function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return 0;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Sends one capture body; resolves with the status and the answer's text. */
export function postCapture(
  baseUrl: string,
  body: Buffer,
  agent?: Agent,
  path = CAPTURE_PATH,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}${path}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'text/plain', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timeout after 30 s')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Drives `baseUrl` with one connection per queue for `durationSec` (bodies POSTed to `path`). */
export async function runCaptureLoad(
  baseUrl: string,
  queues: readonly CaptureRequest[][],
  durationSec: number,
  path = CAPTURE_PATH,
): Promise<CaptureLoadFigures> {
  const latencies: number[] = [];
  const figures: CaptureLoadFigures = {
    requests: 0,
    errors: 0,
    elapsedSec: 0,
    rps: 0,
    eventsPerSec: 0,
    mbPerSec: 0,
    p50: 0,
    p99: 0,
    events: 0,
    sessions: new Set(),
    exhausted: false,
    errorSamples: [],
  };
  let bytes = 0;
  const started = performance.now();
  const deadline = started + durationSec * 1000;
  await Promise.all(
    queues.map(async (queue) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        let i = 0;
        while (performance.now() < deadline) {
          if (i >= queue.length) {
            figures.exhausted = true;
            return;
          }
          const item = queue[i++];
          const sent = performance.now();
          try {
            const res = await postCapture(baseUrl, item.body, agent, path);
            latencies.push(performance.now() - sent);
            figures.requests++;
            if (res.status >= 200 && res.status < 300) {
              figures.events += item.events;
              bytes += item.body.length;
              figures.sessions.add(item.sessionId);
            } else {
              figures.errors++;
              if (figures.errorSamples.length < 3)
                figures.errorSamples.push(`${res.status} ${res.body.slice(0, 200)}`);
            }
          } catch (error) {
            latencies.push(performance.now() - sent);
            figures.requests++;
            figures.errors++;
            if (figures.errorSamples.length < 3) figures.errorSamples.push(String(error));
          }
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  const elapsedSec = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ...figures,
    elapsedSec,
    rps: figures.requests / elapsedSec,
    eventsPerSec: figures.events / elapsedSec,
    mbPerSec: bytes / 1e6 / elapsedSec,
    p50: Math.round(quantile(latencies, 0.5) * 10) / 10,
    p99: Math.round(quantile(latencies, 0.99) * 10) / 10,
  };
}
