import { request } from 'node:http';
import autocannon from 'autocannon';
import type { LoadStats } from './report.js';

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  /** A new JSON body for every request (write scenarios), or none. */
  body?: (n: number) => unknown;
}

/** Headers both sides get: the same Host, so that both build the same absolute next/previous links. */
export function requestHeaders(apiKey: string): Record<string, string> {
  return {
    authorization: `Bearer ${apiKey}`,
    host: 'api.bench.test',
    'content-type': 'application/json',
  };
}

/**
 * Runs autocannon against `baseUrl` for `durationSec` with `connections` keep-alive connections (no
 * pipelining) and returns the figures the report uses. Timeouts, connection errors and non-2xx answers all count
 * as errors.
 */
export async function runLoad(
  baseUrl: string,
  spec: RequestSpec,
  headers: Record<string, string>,
  connections: number,
  durationSec: number,
): Promise<Omit<LoadStats, 'cpuMsPerRequest' | 'rssMaxMb'>> {
  let n = 0;
  const body = spec.body;
  const result = await autocannon({
    url: baseUrl,
    connections,
    pipelining: 1,
    duration: durationSec,
    timeout: 10,
    headers,
    requests: [
      {
        method: spec.method,
        path: spec.path,
        ...(body ? { setupRequest: (req) => ({ ...req, body: JSON.stringify(body(n++)) }) } : {}),
      },
    ],
  });
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    requests: result.requests.total,
  };
}

/** One request (node:http, so that the Host header is sent as given): status and body text. */
export function fetchOnce(
  baseUrl: string,
  spec: RequestSpec,
  headers: Record<string, string>,
  n = 0,
): Promise<{ status: number; body: string }> {
  const payload = spec.body ? JSON.stringify(spec.body(n)) : undefined;
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${spec.path}`, { method: spec.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
