import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { isIP } from 'node:net';
import type { Request } from 'express';
import { defer, lastValueFrom, Observable, switchMap } from 'rxjs';
import {
  type ActivityDescription,
  maskSecrets,
  RECORDS_OWN_ACTIVITY,
  RETRIED_ON_CONFLICT,
  runDescribingActivity,
} from '../common/activity/activity-context.js';
import type { Principal, ProjectCredential } from '../common/auth/principal.js';
import { isUuid } from '../common/validation/ids.js';
import { retriedOnConflict, TransactionHost } from '../database/transactions.js';
import type { NewActivityLog } from './activity-log.repository.js';
import { ActivityLogService } from './activity-log.service.js';
import { fallbackChanges, type RouteActivity, routeActivity } from './activity-route.js';

type ApiRequest = Request & { principal?: Principal; projectCredential?: ProjectCredential };

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The recording reads that are logged, by route (the `/api/environments` twins too). */
const RECORDING_READS: { pattern: RegExp; activity: string }[] = [
  { pattern: /^\/api\/(projects|environments)\/:project_id\/session_recordings\/:id$/, activity: 'viewed' },
  {
    pattern: /^\/api\/(projects|environments)\/:project_id\/session_recordings\/:id\/snapshots$/,
    activity: 'viewed_snapshots',
  },
];
/** The reads of a recording through a sharing link (no key): logged with no user, as `via: sharing_link`. */
const SHARED_READS: { pattern: RegExp; activity: string }[] = [
  { pattern: /^\/api\/shared\/:access_token$/, activity: 'viewed' },
  { pattern: /^\/api\/shared\/:access_token\/snapshots$/, activity: 'viewed_snapshots' },
  { pattern: /^\/api\/shared\/:access_token\/events$/, activity: 'viewed_events' },
];
/** What a sharing token looks like (a longer or other one names no sharing: nothing to log). */
const SHARING_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/** A project's events filtered to one session: a recording's events. */
const EVENTS_LIST = /^\/api\/(projects|environments)\/:project_id\/events$/;

const QUERY_KEPT = [
  'source',
  'blob_key',
  'start_blob_key',
  'end_blob_key',
  'limit',
  'offset',
  'after',
  'before',
];

/**
 * Writes the activity log (src/activity-log):
 *
 * - every write (POST, PUT, PATCH, DELETE) under `/api` and `/scim` runs in one transaction
 *   (`withRequestTransaction`: the transactions its code opens join it, no savepoints), and its entry is inserted
 *   in that transaction once the handler has answered, before the commit: one INSERT, which also takes the
 *   changes the database captured (migration ActivityChangesCapture) when the code described none. When the insert fails, the
 *   transaction rolls back and the request fails: no change is left unlogged. A handler marked
 *   `@RetriedOnConflict()` is run again in a new transaction when a deadlock or serialization failure rolled its
 *   transaction back (up to three attempts). The code handling the write may
 *   describe it (`describeActivity`, `recordChanges`); what it leaves out is taken from the route, the body and
 *   the answer.
 * - a read of a recording, its snapshots, or its events (`…/events?session_id=`) inserts its entry before the
 *   handler runs (the snapshots are streamed as they are read): when the insert fails the read answers an error.
 *   So does a read through a sharing link (`/api/shared/:access_token…`, no key): no user, the address, the
 *   recording the enabled sharing names (an unknown token logs nothing).
 *
 * Declared in the activity log's manifest (`interceptors`), it runs as the last step of the request pipeline:
 * inside AppModule's steps (the API's pool share and statement timeout, the request timeout) and the current
 * references (`@current` already replaced by the ids), after the guard authenticated the key.
 */
@Injectable()
export class ActivityLogInterceptor implements NestInterceptor {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly logs: ActivityLogService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<ApiRequest>();
    const path = req.path;
    const logged = path === '/api' || path.startsWith('/api/') || path.startsWith('/scim/');
    if (!logged) return next.handle();
    const routePath = (req.route as { path?: unknown } | undefined)?.path;
    const pattern = typeof routePath === 'string' ? routePath.replace(/\/$/, '') : path;
    if (READS.has(req.method)) {
      const shared = req.principal ? null : this.sharedRead(req, pattern);
      if (shared) return defer(shared).pipe(switchMap(() => next.handle()));
      const read = this.recordingRead(req, pattern);
      const principal = req.principal;
      return read && principal
        ? defer(() => this.logs.recordRead(read, principal)).pipe(switchMap(() => next.handle()))
        : next.handle();
    }
    const route = routeActivity(req.method, pattern, req.params as Record<string, string>);
    if (Reflect.getMetadata(RECORDS_OWN_ACTIVITY, context.getHandler()) === true) {
      const description: ActivityDescription = {};
      // The service inserts the entry in its own transaction (`recordActivityNow`), before its commit.
      description.record = () => this.logs.record(this.entryOf(req, pattern, route, description, null));
      return new Observable<unknown>((subscriber) => {
        runDescribingActivity(description, () => lastValueFrom(next.handle(), { defaultValue: undefined }))
          .then(
            async (value) => {
              // A service that never recorded (a path that changed nothing in a transaction): recorded now.
              if (!description.recorded)
                await this.logs.record(this.entryOf(req, pattern, route, description, value));
              subscriber.next(value);
              subscriber.complete();
            },
            (err: unknown) => subscriber.error(err),
          )
          .catch((err: unknown) => subscriber.error(err));
      });
    }
    // Each attempt runs the handler again (`next.handle()` calls it on each subscription) with a description of its own.
    const attempt = () => {
      const described: ActivityDescription = {};
      return this.transactions.withRequestTransaction(
        () =>
          runDescribingActivity(described, () => lastValueFrom(next.handle(), { defaultValue: undefined })),
        (result) => this.logs.record(this.entryOf(req, pattern, route, described, result)),
      );
    };
    const retried = Reflect.getMetadata(RETRIED_ON_CONFLICT, context.getHandler()) === true;
    return new Observable<unknown>((subscriber) => {
      (retried ? retriedOnConflict(attempt) : attempt()).then(
        (value) => {
          subscriber.next(value);
          subscriber.complete();
        },
        (err: unknown) => subscriber.error(err),
      );
    });
  }

  /** The insert of a read through a sharing link, or null for any other read. */
  private sharedRead(req: ApiRequest, pattern: string): (() => Promise<void>) | null {
    const read = SHARED_READS.find((r) => r.pattern.test(pattern));
    const token = (req.params as Record<string, string>).access_token;
    if (!read || typeof token !== 'string' || !SHARING_TOKEN.test(token)) return null;
    const query: Record<string, unknown> = {};
    for (const key of QUERY_KEPT) if (req.query[key] !== undefined) query[key] = req.query[key];
    const detail = {
      id: null,
      name: null,
      short_id: null,
      type: null,
      changes: null,
      trigger: null,
      context: {
        method: req.method,
        route: pattern,
        actor: 'anonymous',
        via: 'sharing_link',
        ...(Object.keys(query).length ? { query } : {}),
      },
    };
    return () => this.logs.recordSharedRead(token, read.activity, detail, addressOf(req));
  }

  /** The entry of a logged recording read, or null for any other read. */
  private recordingRead(
    req: ApiRequest,
    pattern: string,
  ): (NewActivityLog & { teamId: number; userId: number }) | null {
    const principal = req.principal;
    if (!principal) return null;
    const params = req.params as Record<string, string>;
    let activity: string | null = null;
    let itemId: string | null = null;
    const read = RECORDING_READS.find((r) => r.pattern.test(pattern));
    if (read) {
      activity = read.activity;
      itemId = params.id ?? null;
    } else if (
      EVENTS_LIST.test(pattern) &&
      typeof req.query.session_id === 'string' &&
      req.query.session_id
    ) {
      activity = 'viewed_events';
      itemId = req.query.session_id;
    }
    const teamId = /^\d{1,9}$/.test(params.project_id ?? '') ? Number(params.project_id) : null;
    if (!activity || teamId === null || itemId === null) return null;
    const query: Record<string, unknown> = {};
    for (const key of QUERY_KEPT) if (req.query[key] !== undefined) query[key] = req.query[key];
    return {
      organizationId: null,
      teamId,
      userId: principal.userId,
      apiKeyId: principal.keyId,
      isSystem: false,
      activity,
      scope: 'Replay',
      itemId: itemId.slice(0, 200),
      detail: {
        id: itemId,
        name: null,
        short_id: null,
        type: null,
        changes: null,
        trigger: null,
        context: { method: req.method, route: pattern, ...(Object.keys(query).length ? { query } : {}) },
      },
      ip: addressOf(req),
    };
  }

  /** The entry of a write, from the route, the code's description, the body and the answer. */
  private entryOf(
    req: ApiRequest,
    pattern: string,
    route: RouteActivity,
    description: ActivityDescription,
    result: unknown,
  ): NewActivityLog {
    const answer =
      result && typeof result === 'object' && !Array.isArray(result)
        ? (result as Record<string, unknown>)
        : null;
    const scope = description.scope ?? route.scope;
    const created = req.method === 'POST' && route.itemId === null;
    const answerId = answer ? idOf(answer) : null;
    const itemId = description.itemId ?? route.itemId ?? (created ? answerId : null);
    let teamId = description.teamId ?? route.teamId;
    if (teamId === null && created && scope === 'Project' && typeof answer?.id === 'number')
      teamId = answer.id;
    if (teamId === null && typeof answer?.team_id === 'number') teamId = answer.team_id;
    let organizationId = description.organizationId ?? route.organizationId;
    if (organizationId === null && created && scope === 'Organization' && isUuid(answer?.id)) {
      organizationId = answer.id;
    }
    const principal = req.principal;
    const body: unknown = req.body;
    return {
      organizationId,
      teamId,
      userId: principal?.userId ?? null,
      apiKeyId: principal?.keyId ?? req.projectCredential?.trackerId ?? null,
      isSystem: !principal,
      activity: route.activity,
      scope,
      itemId: itemId === null ? null : itemId.slice(0, 200),
      detail: {
        id: itemId,
        name: description.name ?? nameOf(answer),
        short_id: description.shortId ?? (typeof answer?.short_id === 'string' ? answer.short_id : null),
        type: scope === 'AccessControl' ? route.scope : null,
        changes: description.changes ?? fallbackChanges(req.method, scope, created, body),
        trigger: null,
        context: {
          method: req.method,
          route: pattern,
          ...(Object.keys(req.params ?? {}).length ? { params: maskSecrets(req.params) } : {}),
        },
      },
      ip: addressOf(req),
      // A SCIM write names no organization or project: the repository takes the domain's organization.
      domainId: route.domainId,
      // What the code did not describe, the database captured (before and after of each row written); the body
      // sent is kept only when nothing was captured.
      capturedChanges: description.changes === undefined,
    };
  }
}

/** The client's address (`req.ip`, as TRUST_PROXY resolves it) when it is one; a forged header is not. */
function addressOf(req: Request): string | null {
  const ip = req.ip;
  return ip && isIP(ip) ? ip : null;
}

function idOf(answer: Record<string, unknown>): string | null {
  const id = answer.short_id ?? answer.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

function nameOf(answer: Record<string, unknown> | null): string | null {
  if (!answer) return null;
  for (const key of ['name', 'label', 'domain', 'email', 'target_email']) {
    const value = answer[key];
    if (typeof value === 'string' && value) return value.slice(0, 400);
  }
  return null;
}
