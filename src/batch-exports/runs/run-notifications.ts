import { createHmac, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Injectable, Logger } from '@nestjs/common';
import { Mailer } from '../../common/mail/mailer.js';
import { Clock } from '../../common/time/clock.js';
import { AppConfig } from '../../config/config.js';
import { MembershipsService } from '../../memberships/memberships.service.js';
import { BatchExportsRepository } from '../batch-exports.repository.js';
import { EgressPolicy } from './egress.js';
import { ExportError } from './export-errors.js';
import { NotificationsRepository, type FailedRun } from './notifications.repository.js';
import { RunQueue } from './run-queue.js';

/** The events a notification webhook carries. */
export const WEBHOOK_EVENTS = ['batch_export_run.failed', 'batch_export.paused'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The headers of a notification webhook. */
export const SIGNATURE_HEADER = 'x-batch-export-signature';
export const TIMESTAMP_HEADER = 'x-batch-export-timestamp';
export const DELIVERY_HEADER = 'x-batch-export-delivery';
export const EVENT_HEADER = 'x-batch-export-event';

/**
 * The signature of a webhook body: `v1=` and the hex HMAC-SHA256, keyed by the export's secret, of
 * `<timestamp>.<raw body>` (the timestamp, Unix seconds, is the one sent in X-Batch-Export-Timestamp).
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What one webhook POST got: its status, or why there was none. */
type PostResult = { status: number } | { error: string; retryable: boolean };

/**
 * Tells the people of an export when it breaks: after a run ended failed (Failed or FailedRetryable), the
 * admins and owners of its organization get an e-mail (at most one a day per export, counted in the database so
 * restarts and replicas share it; an auto-pause is always told), and the export's webhook, when it has one, a
 * signed JSON POST queued in the job queue and retried with backoff. The webhook's deliveries are made by the
 * workers (`deliverNext`), to public addresses only unless BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS (the HTTP
 * destination's egress rules).
 */
@Injectable()
export class RunNotifications {
  private readonly logger = new Logger(RunNotifications.name);
  private readonly egress: EgressPolicy;

  constructor(
    private readonly repository: NotificationsRepository,
    private readonly exports: BatchExportsRepository,
    private readonly memberships: MembershipsService,
    private readonly mailer: Mailer,
    private readonly queue: RunQueue,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.egress = new EgressPolicy(config.allowPrivateDestinations);
  }

  /**
   * The notifications of a run that ended failed; `autoPaused` when its failure paused the export. Never throws:
   * a notification that cannot be made is logged.
   */
  async runFailed(runId: string, autoPaused: { failures: number } | null): Promise<void> {
    let run: FailedRun | null;
    try {
      run = await this.repository.failedRun(runId);
    } catch (err) {
      this.logger.warn({ runId, reason: (err as Error).message }, 'failed run notifications not made');
      return;
    }
    if (!run) return;
    if (autoPaused) {
      this.logger.warn(
        {
          batchExportId: run.batchExportId,
          organizationId: run.organizationId,
          failures: autoPaused.failures,
        },
        'batch export paused automatically after repeated failures',
      );
    }
    await Promise.all([this.email(run, autoPaused), this.queueWebhook(run, autoPaused)]);
  }

  private async email(run: FailedRun, autoPaused: { failures: number } | null): Promise<void> {
    if (!this.mailer.enabled) return;
    const now = this.clock.now();
    const { batchExportId: id, name, organizationId, destinationType } = run;
    let claim: { previous: Date | null } | null = null;
    try {
      if (autoPaused) {
        await this.repository.markEmailed(id, now);
      } else {
        claim = await this.repository.claimFailureEmail(id, now);
        // Another failure of this export was e-mailed within the day.
        if (!claim) return;
      }
      const admins = await this.memberships.adminEmails(organizationId);
      const path = `/api/organizations/${organizationId}/batch_exports/${id}`;
      const message = autoPaused
        ? {
            subject: `Batch export paused after repeated failures: ${name}`,
            text:
              `The batch export "${name}" (${id}) to ${destinationType} was paused automatically: ` +
              `${autoPaused.failures} of its last 50 runs failed. Its latest error:\n\n${run.latestError ?? '(none recorded)'}\n\n` +
              `Fix the destination's configuration, then unpause the export ` +
              `(POST ${path}/unpause) and backfill the intervals it missed.\n`,
          }
        : {
            subject: `Batch export run failed: ${name}`,
            text:
              `A run of the batch export "${name}" (${id}) to ${destinationType} failed (${run.status}), ` +
              `for the interval ${run.dataIntervalStart.toISOString()} to ${run.dataIntervalEnd.toISOString()}:\n\n` +
              `${run.latestError ?? '(no error recorded)'}\n\n` +
              `Its runs and logs: GET ${path}/runs and GET ${path}/logs. A failed interval is exported again by ` +
              `a backfill (POST ${path}/backfill). Further failures of this export within 24 hours send no e-mail.\n`,
          };
      for (const to of admins) await this.mailer.send({ to, ...message });
    } catch (err) {
      if (claim) await this.repository.releaseFailureEmail(id, now, claim.previous).catch(() => undefined);
      this.logger.warn(
        { batchExportId: id, runId: run.id, reason: (err as Error).message },
        autoPaused ? 'auto-pause e-mail not sent' : 'failed run e-mail not sent',
      );
    }
  }

  private async queueWebhook(run: FailedRun, autoPaused: { failures: number } | null): Promise<void> {
    if (!run.webhookUrl) return;
    const deliveryId = randomUUID();
    const event: WebhookEvent = autoPaused ? 'batch_export.paused' : 'batch_export_run.failed';
    const interval = `${run.dataIntervalStart.toISOString()} to ${run.dataIntervalEnd.toISOString()}`;
    const text = autoPaused
      ? `Batch export "${run.name}" to ${run.destinationType} was paused automatically: ${autoPaused.failures} of its last 50 runs failed. Latest error: ${run.latestError ?? 'none recorded'}`
      : `Batch export "${run.name}" to ${run.destinationType}: the run for ${interval} failed (${run.status}). Error: ${run.latestError ?? 'none recorded'}`;
    const body = JSON.stringify({
      id: deliveryId,
      event,
      created_at: this.clock.now().toISOString(),
      text,
      organization_id: run.organizationId,
      team_id: run.teamId,
      batch_export: {
        id: run.batchExportId,
        name: run.name,
        model: run.model,
        destination_type: run.destinationType,
        paused: autoPaused ? true : run.paused,
      },
      run: {
        id: run.id,
        status: run.status,
        data_interval_start: run.dataIntervalStart.toISOString(),
        data_interval_end: run.dataIntervalEnd.toISOString(),
        backfill_id: run.backfillId,
        latest_error: run.latestError,
      },
      failures: autoPaused?.failures ?? null,
    });
    try {
      await this.queue.sendNotification(deliveryId, { batch_export_id: run.batchExportId, event, body });
    } catch (err) {
      this.logger.warn(
        { batchExportId: run.batchExportId, runId: run.id, reason: (err as Error).message },
        'notification webhook not queued',
      );
    }
  }

  /**
   * Delivers the next notification webhook due, if any (false when none was): POSTed to the export's URL as it
   * is now, signed with its secret as it is now (an export whose webhook was removed, or that was deleted, drops
   * its pending deliveries). A 2xx ends it; a 408, 429, 5xx, timeout or connection failure is retried by the
   * queue; any other answer, or a refused address, drops it. Each failed attempt is a WARNING in the export's log.
   * `stop` (the worker shutting down) aborts the POST: the delivery goes back to the queue for a later attempt.
   */
  async deliverNext(stop?: AbortSignal): Promise<boolean> {
    const job = await this.queue.fetchNotification();
    if (!job) return false;
    const attempt = { id: job.id, retryCount: job.retryCount };
    const { batch_export_id: batchExportId, event, body } = job.data;
    const target = await this.repository.webhookTarget(batchExportId);
    if (!target) {
      await this.queue.completeNotification(attempt, { dropped: 'the export has no webhook now' });
      return true;
    }
    const result = await this.post(target.url, target.secret, job.id, event, body, stop);
    if (stop?.aborted) {
      await this.queue.failNotification(attempt, { problem: 'the worker stopped' });
      return true;
    }
    if ('status' in result && result.status >= 200 && result.status < 300) {
      await this.queue.completeNotification(attempt, { status: result.status });
      return true;
    }
    const problem = 'status' in result ? `answered ${result.status}` : result.error;
    const retryable =
      'status' in result ? [408, 429].includes(result.status) || result.status >= 500 : result.retryable;
    const maxAttempts = this.config.get('BATCH_EXPORT_WEBHOOK_MAX_ATTEMPTS');
    const number = job.retryCount + 1;
    const last = !retryable || number >= maxAttempts;
    await this.exports
      .addLogs([
        {
          batchExportId,
          timestamp: this.clock.now(),
          level: 'WARNING',
          message:
            `Notification webhook ${event} (delivery ${job.id}), attempt ${number} of ${maxAttempts}: the receiver ${problem.replace(/\.$/, '')}. ` +
            (last ? 'It is dropped.' : 'It will be retried.'),
        },
      ])
      .catch(() => undefined);
    if (retryable) await this.queue.failNotification(attempt, { problem });
    else await this.queue.completeNotification(attempt, { dropped: problem });
    return true;
  }

  /** One signed POST, bounded in total by BATCH_EXPORT_HTTP_TIMEOUT_MS; redirects are not followed. */
  private async post(
    url: string,
    secret: string,
    deliveryId: string,
    event: string,
    body: string,
    stop?: AbortSignal,
  ): Promise<PostResult> {
    let target: URL;
    try {
      target = new URL(url);
      await this.egress.resolve(target.hostname.replace(/^\[|\]$/g, ''));
    } catch (err) {
      const retryable = err instanceof ExportError ? err.retryable : false;
      return {
        error: err instanceof ExportError ? `was not reached: ${err.message}` : 'has an invalid URL',
        retryable,
      };
    }
    const timeoutMs = this.config.get('BATCH_EXPORT_HTTP_TIMEOUT_MS');
    const timestamp = Math.floor(Date.now() / 1000);
    const payload = Buffer.from(body, 'utf8');
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<PostResult>((resolve) => {
      const req = request(
        target,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': payload.length,
            'user-agent': 'batch-export-notifications',
            [EVENT_HEADER]: event,
            [DELIVERY_HEADER]: deliveryId,
            [TIMESTAMP_HEADER]: String(timestamp),
            [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
          },
          lookup: this.egress.lookup,
          signal: stop,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            clearTimeout(deadline);
            resolve({ status: res.statusCode ?? 0 });
          });
          res.on('error', () => undefined);
        },
      );
      const deadline = setTimeout(
        () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(deadline);
        const refused = err instanceof ExportError && !err.retryable;
        resolve({
          error: refused
            ? `was not reached: ${err.message}`
            : `could not be reached (${err.code ?? err.message})`,
          retryable: !refused,
        });
      });
      req.end(payload);
    });
  }
}
