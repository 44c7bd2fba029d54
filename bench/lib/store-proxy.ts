/**
 * A counting HTTP proxy in front of the bench's S3-protocol server (s3rver): every request the service (or the
 * baseline) sends to the object store passes through it and is counted by kind, so the scenarios report PUT and
 * GET requests (and the rest: DeleteObjects, lists) per minute of capture, playback or purge.
 */
import { createServer, request, type Server } from 'node:http';

/** Requests to the store by kind. */
export interface StoreCounts {
  /** PutObject (and multipart parts). */
  put: number;
  /** GetObject, ranged or whole. */
  get: number;
  /** GetObject with a Range header (among `get`). */
  rangedGet: number;
  /** DeleteObjects (POST ?delete) and DeleteObject. */
  delete: number;
  /** Everything else (ListObjectsV2, HEAD, lifecycle). */
  other: number;
}

export const NO_REQUESTS: Readonly<StoreCounts> = Object.freeze({
  put: 0,
  get: 0,
  rangedGet: 0,
  delete: 0,
  other: 0,
});

/** `after - before`, kind by kind. */
export function countsBetween(before: StoreCounts, after: StoreCounts): StoreCounts {
  return {
    put: after.put - before.put,
    get: after.get - before.get,
    rangedGet: after.rangedGet - before.rangedGet,
    delete: after.delete - before.delete,
    other: after.other - before.other,
  };
}

/** The kind of one request to an S3 endpoint (path-style), from its method, query and headers. */
export function requestKind(method: string, url: string, ranged: boolean): keyof StoreCounts {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const params = new URLSearchParams(query);
  if (method === 'PUT' && !params.has('lifecycle')) return 'put';
  if (method === 'GET' && !params.has('list-type') && !params.has('lifecycle') && !isBucketPath(url))
    return ranged ? 'rangedGet' : 'get';
  if (method === 'DELETE' || (method === 'POST' && params.has('delete'))) return 'delete';
  return 'other';
}

/** A path-style URL naming only the bucket (`/bucket` or `/bucket/`): a list, not an object. */
const isBucketPath = (url: string): boolean => /^\/[^/?]+\/?(\?|$)/.test(url);

export class StoreProxy {
  private server: Server | null = null;
  private readonly counted: StoreCounts = { ...NO_REQUESTS };
  endpoint = '';

  constructor(private readonly target: string) {}

  /** The requests counted so far (a copy). */
  get counts(): StoreCounts {
    return { ...this.counted };
  }

  async start(): Promise<void> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const kind = requestKind(req.method ?? '', req.url ?? '', req.headers.range !== undefined);
      this.counted[kind]++;
      if (kind === 'rangedGet') this.counted.get++;
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.endpoint = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }
}
