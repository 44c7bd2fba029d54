import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rowToJson, type ExportRow } from '../export-models.js';
import { AttemptStopped, isTransientNetworkError, nonRetryable, retryable } from '../export-errors.js';
import type { DeliveryContext, DestinationWriter } from './destination.js';
import { captureEvent } from './posthog-formats.js';

/** Most records and bytes (before the envelope) in one POST. */
const MAX_BATCH_RECORDS = 1000;
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
const MAX_RETRY_AFTER_MS = 60_000;

interface Response {
  status: number;
  retryAfterMs: number | null;
  body: string;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new AttemptStopped('cancelled'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AttemptStopped('cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * HTTP: PostHog's HTTP batch export. Records are POSTed as JSON in batches of at most 1,000 records (and
 * about 4 MB), in PostHog's capture batch format `{"api_key": <token>, "historical_migration": true,
 * "batch": [...]}`: events as PostHog's capture takes them (`uuid`, `distinct_id`, `timestamp`, `event`,
 * `properties`), so the URL may be another instance's `/batch/`; another model's rows as they are. Each request must end within BATCH_EXPORT_HTTP_TIMEOUT_MS in total. A 429, a 5xx, a
 * failed connection or a request past that deadline is retried with a doubling delay (Retry-After when longer)
 * up to BATCH_EXPORT_HTTP_MAX_RETRIES times, then the attempt fails and the run is retried; another 4xx fails
 * the run. Redirects are not followed.
 *
 * Every batch carries a stable id, `<run id>:<batch number>` (0, 1, … in the run's row order), in the
 * `Idempotency-Key` header and the body's `batch_id`: a retried attempt of the run re-sends the same rows under
 * the same ids, so a receiver that keeps the ids it has stored drops what it already has (delivery is at
 * least once; with that check, exactly once).
 */
export class HttpWriter implements DestinationWriter {
  private readonly url: URL;
  private batch: string[] = [];
  private batchBytes = 0;
  private batchNumber = 0;
  private bytes = 0;

  constructor(private readonly ctx: DeliveryContext) {
    this.url = new URL(ctx.config.url as string);
  }

  async open(): Promise<void> {
    // Resolve once up front, so a refused or unknown host fails the run before any data is read.
    await this.ctx.egress.resolve(this.url.hostname.replace(/^\[|\]$/g, ''));
  }

  async write(rows: readonly ExportRow[]): Promise<void> {
    for (const row of rows) {
      const json = JSON.stringify(this.record(row));
      if (
        this.batch.length &&
        (this.batch.length >= MAX_BATCH_RECORDS || this.batchBytes + json.length > MAX_BATCH_BYTES)
      ) {
        await this.flush();
      }
      this.batch.push(json);
      this.batchBytes += json.length + 1;
    }
  }

  /** An event as PostHog's capture takes it (posthog-formats.ts); another model's row as it is. */
  private record(row: ExportRow): Record<string, unknown> {
    return this.ctx.model.name === 'events' ? captureEvent(row) : rowToJson(this.ctx.model, row);
  }

  async finish(): Promise<{ bytes: number }> {
    if (this.batch.length) await this.flush();
    return { bytes: this.bytes };
  }

  async close(): Promise<void> {
    this.batch = [];
  }

  private async flush(): Promise<void> {
    const batchId = `${this.ctx.runId}:${this.batchNumber++}`;
    const body = Buffer.from(
      `{"api_key":${JSON.stringify(this.ctx.config.token)},"historical_migration":true,` +
        `"batch_id":${JSON.stringify(batchId)},"batch":[${this.batch.join(',')}]}`,
      'utf8',
    );
    const records = this.batch.length;
    this.batch = [];
    this.batchBytes = 0;
    const { maxRetries, retryDelayMs } = this.ctx.http;
    for (let attempt = 0; ; attempt++) {
      let problem: string;
      let waitMs = retryDelayMs * 2 ** attempt;
      try {
        const response = await this.post(body, batchId);
        if (response.status >= 200 && response.status < 300) {
          this.bytes += body.length;
          return;
        }
        if (response.status !== 429 && response.status < 500) {
          throw nonRetryable(
            `The HTTP destination answered ${response.status} to a batch of ${records} records: ${response.body.slice(0, 300)}`,
          );
        }
        problem = `answered ${response.status}`;
        if (response.retryAfterMs !== null)
          waitMs = Math.max(waitMs, Math.min(response.retryAfterMs, MAX_RETRY_AFTER_MS));
      } catch (err) {
        if (!isTransientNetworkError(err)) throw err;
        problem =
          err instanceof RequestDeadline
            ? err.message
            : `could not be reached (${(err as NodeJS.ErrnoException).code})`;
      }
      if (attempt >= maxRetries) {
        throw retryable(
          `The HTTP destination ${problem} after ${maxRetries + 1} tries of a batch of ${records} records.`,
        );
      }
      await this.ctx.log(
        'WARNING',
        `The HTTP destination ${problem}; retrying the batch of ${records} records in ${Math.round(waitMs)} ms.`,
      );
      await sleep(waitMs, this.ctx.signal);
    }
  }

  /**
   * One POST, bounded in total by BATCH_EXPORT_HTTP_TIMEOUT_MS (connecting, sending, and reading the whole
   * answer: a receiver dripping its answer is cut off at the deadline, not only one that goes silent).
   */
  private post(body: Buffer, batchId: string): Promise<Response> {
    const request = this.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const timeoutMs = this.ctx.http.timeoutMs;
    return new Promise<Response>((resolve, reject) => {
      let deadline: NodeJS.Timeout | undefined = undefined;
      let timedOut = false;
      const fail = (err: unknown) => {
        clearTimeout(deadline);
        if (this.ctx.signal.aborted) reject(new AttemptStopped('cancelled'));
        else reject(timedOut ? new RequestDeadline(timeoutMs) : err);
      };
      const req = request(
        this.url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            'idempotency-key': batchId,
          },
          lookup: this.ctx.egress.lookup,
          signal: this.ctx.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            // Only the start of an answer is kept (for an error message).
            if (size < 4096) chunks.push(chunk);
            size += chunk.length;
          });
          res.on('end', () => {
            clearTimeout(deadline);
            if (timedOut) return fail(null);
            const retryAfter = res.headers['retry-after'];
            const seconds = retryAfter !== undefined ? Number(retryAfter) : NaN;
            resolve({
              status: res.statusCode ?? 0,
              retryAfterMs: Number.isFinite(seconds) ? seconds * 1000 : null,
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
          res.on('error', fail);
          res.on('aborted', () => fail(Object.assign(new Error('answer aborted'), { code: 'ECONNRESET' })));
        },
      );
      deadline = setTimeout(() => {
        timedOut = true;
        req.destroy(new RequestDeadline(timeoutMs));
      }, timeoutMs);
      req.on('error', fail);
      req.end(body);
    });
  }
}

/** A request that did not end within BATCH_EXPORT_HTTP_TIMEOUT_MS (a transient failure: the batch is retried). */
class RequestDeadline extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(timeoutMs: number) {
    super(`did not answer in full within ${timeoutMs} ms (BATCH_EXPORT_HTTP_TIMEOUT_MS)`);
    this.name = 'RequestDeadline';
  }
}
