/**
 * The bench's baseline: the bench scenarios' routes written with nothing but `node:http` and `pg`. For each
 * request it does what the service does — authenticates the bearer key by its SHA-256 digest, checks membership
 * with the same SQL, runs the same page and count SQL — and answers the same JSON, byte for byte. It is the
 * yardstick the service's framework, ORM and serialisation overhead is measured against; it must never do less
 * database work than the service. POST /s/ (recording capture) lives in capture.ts.
 *
 * Environment: DATABASE_URL, PORT, DATABASE_POOL_SIZE (default 10, as the service), MAX_PAGE_LIMIT (1000),
 * INSTANCE_TAG (none), INVITE_DAYS_VALIDITY (3), RECORDING_RETENTION_DAYS (30), BASELINE_FRONT (node: see fronts.ts).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import pg from 'pg';
import { capture, CaptureError } from './capture.js';
import { captureEvents } from './events.js';
import { type Front, type FrontRoute, FRONTS, listenExpress, listenNest } from './fronts.js';
import * as sql from './sql.js';
import { globToLike, MemberAccess, reaches, type RuleRow } from '../lib/access-rules.js';

const env = process.env;
const MAX_PAGE_LIMIT = Number(env.MAX_PAGE_LIMIT ?? 1000);
const METADATA = JSON.stringify({ instance_tag: env.INSTANCE_TAG ?? 'none' });
const INVITE_DAYS_VALIDITY = Number(env.INVITE_DAYS_VALIDITY ?? 3);
const RECORDING_RETENTION_DAYS = Number(env.RECORDING_RETENTION_DAYS ?? 30);
const DAY_MS = 24 * 60 * 60 * 1000;
/** The most visible recordings the list of a restricted caller counts (the service's RESTRICTED_COUNT_CAP). */
const RESTRICTED_COUNT_CAP = 10_000;

const pool = new pg.Pool({
  connectionString: env.DATABASE_URL,
  max: Number(env.DATABASE_POOL_SIZE ?? 10),
  application_name: 'bench-baseline',
  connectionTimeoutMillis: 5000,
  statement_timeout: 30000,
});

/** The names of the statements the service sends prepared (src/database/prepared-sql.ts), by text. */
const preparedNames = new Map<string, string>();

/**
 * `text` as a named prepared statement, as the service sends its marked lookups and writes (DATABASE_PREPARED_STATEMENTS,
 * on by default): each connection plans it once. A new config object per call (the driver adds the values to it).
 */
function named(text: string): { name: string; text: string } {
  let name = preparedNames.get(text);
  if (!name) {
    name = `s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return { name, text };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; code: string; detail: string; attr: string | null },
  ) {
    super(body.detail);
  }
}

const notFound = () =>
  new HttpError(404, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
const invalid = (detail: string, attr: string | null, code = 'invalid_input') =>
  new HttpError(400, { type: 'validation_error', code, detail, attr });

interface Principal {
  keyId: string;
  userId: number;
  scopes: string[];
  scopedOrganizations: string[] | null;
  scopedTeams: number[] | null;
}

// ---------------------------------------------------------------------------------------------- auth

const SECRET_RE = /^phx_[0-9A-Za-z]{43}$/;
const HOUR_MS = 3600_000;

async function authenticate(req: IncomingMessage, scope: string): Promise<Principal> {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw new HttpError(401, {
      type: 'authentication_error',
      code: 'not_authenticated',
      detail: 'Authentication credentials were not provided.',
      attr: null,
    });
  }
  const failed = (detail = 'Invalid API key.') =>
    new HttpError(401, { type: 'authentication_error', code: 'authentication_failed', detail, attr: null });
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw failed('Invalid Authorization header: expected "Bearer <key>".');
  if (!SECRET_RE.test(match[1])) throw failed();
  const digest = createHash('sha256').update(match[1]).digest('hex');
  const { rows } = await pool.query(named(sql.KEY_BY_DIGEST), [digest]);
  const row = rows[0];
  if (!row) throw failed();
  const now = new Date();
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= HOUR_MS) {
    await pool.query(sql.TOUCH_KEY, [row.id, row.user_id, now]);
  }
  const scopes: string[] = row.scopes;
  const [object] = scope.split(':');
  if (!scopes.includes('*') && !scopes.includes(scope) && !scopes.includes(`${object}:write`)) {
    throw new HttpError(403, {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: `API key missing required scope '${scope}'`,
      attr: null,
    });
  }
  return {
    keyId: row.id,
    userId: row.user_id,
    scopes,
    scopedOrganizations: row.scoped_organizations?.length ? row.scoped_organizations : null,
    scopedTeams: row.scoped_teams?.length ? row.scoped_teams : null,
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Membership check of every organization-scoped route: 404 outside, 403 for a restricted key. */
async function requireAccess(
  principal: Principal,
  organizationId: string,
): Promise<{ id: string; level: number }> {
  if (!UUID_RE.test(organizationId)) throw notFound();
  const id = organizationId.toLowerCase();
  const { rows } = await pool.query(named(sql.ACCESS_OF), [principal.userId, id, principal.scopedTeams]);
  if (!rows.length) throw notFound();
  if (principal.scopedOrganizations && !principal.scopedOrganizations.includes(id)) {
    throw new HttpError(403, {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'This API key is not allowed to access this organization.',
      attr: null,
    });
  }
  return { id, level: rows[0].level };
}

// ---------------------------------------------------------------------------------------------- pages

interface PageParams {
  limit: number;
  offset: number;
}

function pageParams(url: URL): PageParams {
  const read = (name: 'limit' | 'offset'): number | undefined => {
    const all = url.searchParams.getAll(name);
    if (!all.length || (all.length === 1 && all[0] === '')) return undefined;
    if (all.length > 1 || !/^\d+$/.test(all[0].trim())) {
      throw invalid(`'${name}' must be a non-negative integer.`, name);
    }
    const value = Number(all[0].trim());
    if (!Number.isSafeInteger(value)) throw invalid(`'${name}' is too large.`, name);
    return value;
  };
  const limit = read('limit') ?? Math.min(100, MAX_PAGE_LIMIT);
  if (limit < 1 || limit > MAX_PAGE_LIMIT)
    throw invalid(`'limit' must be between 1 and ${MAX_PAGE_LIMIT}.`, 'limit');
  return { limit, offset: read('offset') ?? 0 };
}

function envelope(url: URL, { limit, offset }: PageParams, count: number, results: unknown[]) {
  const at = (newOffset: number) => {
    const link = new URL(url.href);
    link.searchParams.set('limit', String(limit));
    link.searchParams.set('offset', String(newOffset));
    return link.href;
  };
  return {
    count,
    next: offset + limit < count ? at(offset + limit) : null,
    previous: offset > 0 ? at(Math.max(0, Math.min(offset - limit, count - limit))) : null,
    results,
  };
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

// ---------------------------------------------------------------------------------------------- organizations

/* eslint-disable @typescript-eslint/no-explicit-any -- rows of hand-written SQL */
function organizationDto(row: any) {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    logo_media_id: row.logo_media_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    membership_level: row.membership_level,
    plugins_access_level: row.plugins_access_level,
    teams: row.projects.map((t: any) => ({
      id: t.id,
      uuid: t.uuid,
      organization: t.organizationId,
      api_token: t.apiToken,
      name: t.name,
      timezone: t.timezone,
    })),
    projects: row.projects.map((t: any) => ({ id: t.id, organization_id: t.organizationId, name: t.name })),
    available_product_features: row.available_product_features,
    is_member_join_email_enabled: row.is_member_join_email_enabled,
    metadata: METADATA,
    customer_id: row.customer_id,
    enforce_2fa: row.enforce_2fa,
    member_count: row.member_count,
    members_can_invite: row.members_can_invite,
    members_can_use_personal_api_keys: row.members_can_use_personal_api_keys,
    allow_publicly_shared_resources: row.allow_publicly_shared_resources,
    is_ai_data_processing_approved: row.is_ai_data_processing_approved,
    default_anonymize_ips: row.default_anonymize_ips,
    default_experiment_stats_method: row.default_experiment_stats_method,
    default_role_id: row.default_role_id,
  };
}

async function listOrganizations(req: IncomingMessage, url: URL) {
  const principal = await authenticate(req, 'organization:read');
  const page = pageParams(url);
  const only = principal.scopedOrganizations;
  const [counted, rows] = await Promise.all([
    pool.query(sql.ORGANIZATIONS_COUNT, [principal.userId, only, principal.scopedTeams]),
    pool.query(sql.ORGANIZATIONS_PAGE, [
      principal.userId,
      only,
      principal.scopedTeams,
      page.limit,
      page.offset,
    ]),
  ]);
  return envelope(url, page, counted.rows[0].total, rows.rows.map(organizationDto));
}

async function retrieveOrganization(req: IncomingMessage, organizationId: string) {
  const principal = await authenticate(req, 'organization:read');
  const access = await requireAccess(principal, organizationId);
  const { rows } = await pool.query(named(sql.ORGANIZATION_VIEW), [principal.userId, access.id]);
  if (!rows.length) throw notFound();
  return organizationDto(rows[0]);
}

/** The writable fields of PATCH /api/organizations/:id (the baseline writes only `name`; the others are refused). */
const ORGANIZATION_READ_ONLY = new Set([
  'id',
  'slug',
  'created_at',
  'updated_at',
  'membership_level',
  'plugins_access_level',
  'teams',
  'projects',
  'available_product_features',
  'metadata',
  'customer_id',
  'member_count',
]);

/**
 * PATCH /api/organizations/:id changing the name, as the service runs it: every statement after the key's in the
 * request's transaction (access check, update, the answer's view, then the activity log entry with the changes the
 * database captured), admins and owners only.
 */
async function patchOrganization(req: IncomingMessage, organizationId: string) {
  const principal = await authenticate(req, 'organization:write');
  const body = await readJson(req);
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('Expected a JSON object in the request body.', null);
  }
  const input = body as Record<string, any>;
  for (const key of Object.keys(input)) {
    if (key !== 'name' && !ORGANIZATION_READ_ONLY.has(key))
      throw invalid(`Unknown field '${key}'.`, key, 'unknown_field');
  }
  if (typeof input.name !== 'string') throw invalid('Name must be a string.', 'name');
  const name = input.name.trim();
  if (!name) throw invalid('Name may not be blank.', 'name');
  if (name.length > 64) throw invalid('Name must be at most 64 characters long.', 'name');
  if (!UUID_RE.test(organizationId)) throw notFound();
  const client = await pool.connect();
  try {
    await client.query(sql.BEGIN);
    const id = organizationId.toLowerCase();
    const { rows: access } = await client.query(named(sql.ACCESS_OF), [
      principal.userId,
      id,
      principal.scopedTeams,
    ]);
    if (!access.length) throw notFound();
    if (principal.scopedOrganizations && !principal.scopedOrganizations.includes(id)) {
      throw new HttpError(403, {
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'This API key is not allowed to access this organization.',
        attr: null,
      });
    }
    if (access[0].level < 8) {
      throw new HttpError(403, {
        type: 'authentication_error',
        code: 'permission_denied',
        detail: 'Your organization access level is insufficient.',
        attr: null,
      });
    }
    await client.query(sql.ORGANIZATION_UPDATE_NAME, [name, id]);
    const { rows } = await client.query(named(sql.ORGANIZATION_VIEW), [principal.userId, id]);
    if (!rows.length) throw notFound();
    const answer = organizationDto(rows[0]);
    // The entry the service's interceptor writes before the commit; the captured changes replace `changes`.
    await client.query(named(sql.INSERT_LOG), [
      id,
      null,
      principal.userId,
      principal.keyId,
      false,
      'updated',
      'Organization',
      organizationId,
      JSON.stringify({
        id: organizationId,
        name: answer.name,
        short_id: null,
        type: null,
        changes: [{ type: 'Organization', action: 'changed', field: 'name', before: null, after: name }],
        trigger: null,
        context: { method: 'PATCH', route: '/api/organizations/:id', params: { id: organizationId } },
      }),
      addressOf(req),
      null,
      true,
    ]);
    await client.query(sql.COMMIT);
    return answer;
  } catch (err) {
    await client.query(sql.ROLLBACK).catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

// ---------------------------------------------------------------------------------------------- batch exports

function runDto(r: any) {
  return {
    id: r.id,
    status: r.status,
    records_completed: r.records_completed,
    latest_error: r.latest_error,
    data_interval_start: r.data_interval_start.toISOString(),
    data_interval_end: r.data_interval_end.toISOString(),
    cursor: r.cursor,
    created_at: r.created_at.toISOString(),
    finished_at: iso(r.finished_at),
    last_updated_at: r.last_updated_at.toISOString(),
    records_total_count: r.records_total_count,
    records_failed: r.records_failed,
    bytes_exported: r.bytes_exported === null ? null : Number(r.bytes_exported),
    batch_export: r.batch_export_id,
    backfill: r.backfill_id,
  };
}

function batchExportDto(e: any, runs: unknown[]) {
  return {
    id: e.id,
    team_id: e.team_id,
    name: e.name,
    model: e.model,
    destination: {
      type: e.destination_type,
      config: e.destination_config,
      integration: e.destination_integration_id,
      integration_id: e.destination_integration_id,
    },
    interval: e.interval,
    paused: e.paused,
    created_at: e.created_at.toISOString(),
    last_updated_at: e.last_updated_at.toISOString(),
    last_paused_at: iso(e.last_paused_at),
    start_at: iso(e.start_at),
    end_at: iso(e.end_at),
    latest_runs: runs,
    hogql_query: e.hogql_query,
    schema: null,
    filters: e.filters ?? null,
    timezone: e.timezone,
    offset_day:
      e.interval === 'week' && e.interval_offset !== null ? Math.floor(e.interval_offset / 86400) : null,
    offset_hour: e.interval_offset !== null ? Math.floor((e.interval_offset % 86400) / 3600) : null,
    interval_offset: e.interval_offset,
    notification_webhook_url: e.notification_webhook_url,
    incremental_mode: e.incremental_mode,
    primary_key: e.primary_key,
    version_key: e.version_key,
  };
}

async function listBatchExports(req: IncomingMessage, url: URL, organizationId: string) {
  const principal = await authenticate(req, 'batch_export:read');
  const page = pageParams(url);
  if (!UUID_RE.test(organizationId)) throw notFound();
  const id = organizationId.toLowerCase();
  const member = (
    await pool.query(named(sql.ACCESS_WITH_PROJECTS), [principal.userId, id, principal.scopedTeams])
  ).rows[0];
  if (!member) throw notFound();
  const visible = visibleExports(principal.userId, member.level, member.projects);
  const filter = [
    id,
    principal.scopedTeams,
    visible && JSON.stringify(visible.teams),
    visible?.creatorId ?? null,
  ];
  const [rows, counted] = await Promise.all([
    pool.query(sql.BATCH_EXPORTS_PAGE, [...filter, page.limit, page.offset]),
    pool.query(sql.BATCH_EXPORTS_COUNT, filter),
  ]);
  const ids = rows.rows.map((e) => e.id);
  const runs = new Map<string, unknown[]>(ids.map((id) => [id, []]));
  if (ids.length) {
    for (const r of (await pool.query(sql.LATEST_RUNS, [ids, 10])).rows)
      runs.get(r.batch_export_id)?.push(runDto(r));
  }
  return envelope(
    url,
    page,
    counted.rows[0].total,
    rows.rows.map((e) => batchExportDto(e, runs.get(e.id) ?? [])),
  );
}

/** The exports a member's list shows, by project (null: no rule hides any), from the access statement's rules. */
function visibleExports(userId: number, level: number, projects: [number, RuleRow[]][]) {
  if (level >= 8) return null;
  const teams: { team: number; only_ids: string[] | null; except_ids: string[] }[] = [];
  let hidesAny = projects.length > 1000;
  for (const [team, rules] of projects.slice(0, 1000)) {
    const access = new MemberAccess(level, team, rules);
    if (access.project === 'none') {
      hidesAny = true;
      continue;
    }
    const filter = access.objectFilter('batch_export', 'batch_export');
    if (filter) hidesAny = true;
    teams.push({ team, only_ids: filter?.only ?? null, except_ids: filter?.except ?? [] });
  }
  return hidesAny ? { creatorId: userId, teams } : null;
}

/** The client's address as the service logs it (an IPv4 address without its IPv6 mapping). */
function addressOf(req: IncomingMessage): string | null {
  const raw = req.socket.remoteAddress ?? null;
  return raw?.startsWith('::ffff:') ? raw.slice(7) : raw;
}

// ---------------------------------------------------------------------------------------------- invites

const INVITE_FIELDS = new Set([
  'target_email',
  'first_name',
  'level',
  'message',
  'private_project_access',
  'send_email',
  'combine_pending_invites',
]);
const INVITE_READ_ONLY = new Set([
  'id',
  'emailing_attempt_made',
  'is_expired',
  'created_by',
  'created_at',
  'updated_at',
]);
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw invalid('The request body is not valid JSON.', null, 'parse_error');
  }
}

/**
 * POST …/invites. `?bench_activity_log=off` (the baseline's own switch, for the activity log scenario) leaves out
 * the activity log entry: the same write without its log insert.
 */
async function createInvite(req: IncomingMessage, url: URL, organizationId: string) {
  const logged = url.searchParams.get('bench_activity_log') !== 'off';
  const principal = await authenticate(req, 'organization_member:write');
  const body = await readJson(req);
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('Expected a JSON object in the request body.', null);
  }
  const input = body as Record<string, any>;
  for (const key of Object.keys(input)) {
    // Read-only fields are ignored, as the service ignores them.
    if (!INVITE_FIELDS.has(key) && !INVITE_READ_ONLY.has(key)) {
      throw invalid(`Unknown field '${key}'.`, key, 'unknown_field');
    }
  }
  if (typeof input.target_email !== 'string')
    throw invalid('This field is required.', 'target_email', 'required');
  const trimmed = input.target_email.trim();
  const at = trimmed.lastIndexOf('@');
  const email = at < 0 ? trimmed : trimmed.slice(0, at + 1) + trimmed.slice(at + 1).toLowerCase();
  if (email.length > 254 || !EMAIL_RE.test(email))
    throw invalid('Enter a valid email address.', 'target_email');
  const level = input.level ?? 1;
  if (![1, 8, 15].includes(level)) throw invalid('Must be one of 1, 8, 15.', 'level');
  const firstName = typeof input.first_name === 'string' ? input.first_name.trim() : '';
  if (firstName.length > 30)
    throw invalid('Ensure this field has no more than 30 characters.', 'first_name', 'max_length');
  const access = await requireAccess(principal, organizationId);
  if (level > access.level) {
    throw new HttpError(403, {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'You cannot invite someone at a level above your own.',
      attr: 'level',
    });
  }
  const members = await pool.query(named(sql.MEMBER_EMAILS), [access.id, [email.toLowerCase()]]);
  if (members.rows.length) {
    throw invalid(
      'A user with this email address already belongs to the organization.',
      'target_email',
      'already_member',
    );
  }
  const now = new Date();
  const client = await pool.connect();
  let id: string;
  try {
    await client.query(sql.BEGIN);
    await client.query(named(sql.INVITE_LOCK_ADDRESSES), [sql.INVITE_LOCK_SPACE, access.id, [email]]);
    await client.query(named(sql.INVITE_DELETE_FOR_EMAIL), [access.id, email]);
    const inserted = await client.query(named(sql.INVITE_INSERT), [
      access.id,
      email,
      firstName,
      level,
      input.message ?? null,
      JSON.stringify([]),
      input.send_email ?? true,
      principal.userId,
      now,
      now,
    ]);
    id = inserted.rows[0].id;
    if (logged) {
      // The entry the service's interceptor writes in the request's transaction, before its commit.
      await client.query(named(sql.INSERT_LOG), [
        access.id,
        null,
        principal.userId,
        principal.keyId,
        false,
        'created',
        'OrganizationInvite',
        id,
        JSON.stringify({
          id,
          name: null,
          short_id: null,
          type: null,
          changes: [
            {
              type: 'OrganizationInvite',
              action: 'created',
              field: null,
              before: null,
              after: { target_email: email, first_name: firstName },
            },
          ],
          trigger: null,
          context: {
            method: 'POST',
            route: '/api/organizations/:organization_id/invites',
            params: { organization_id: organizationId },
          },
        }),
        addressOf(req),
        null,
        // The route describes no changes of its own: the rows its triggers captured replace `detail.changes`.
        true,
      ]);
    }
    await client.query(sql.COMMIT);
  } catch (err) {
    await client.query(sql.ROLLBACK).catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  const { rows } = await pool.query(named(sql.INVITE_WITH_CREATOR), [[id]]);
  const r = rows[0];
  const invite = (c: string) => r[c];
  const creator = (c: string) => r[`creator_${c}`];
  return {
    id: invite('id'),
    target_email: invite('target_email'),
    first_name: invite('first_name'),
    emailing_attempt_made: invite('emailing_attempt_made'),
    level: invite('level'),
    is_expired: Date.now() - invite('created_at').getTime() > INVITE_DAYS_VALIDITY * 24 * HOUR_MS,
    created_by:
      creator('id') === null
        ? null
        : {
            id: creator('id'),
            uuid: creator('uuid'),
            distinct_id: creator('distinct_id'),
            first_name: creator('first_name'),
            last_name: creator('last_name'),
            email: creator('email'),
            is_email_verified: creator('is_email_verified'),
            hedgehog_config: creator('hedgehog_config'),
            is_service_account: creator('is_service_account'),
          },
    created_at: invite('created_at').toISOString(),
    updated_at: invite('updated_at').toISOString(),
    message: invite('message'),
    private_project_access: invite('private_project_access').length
      ? invite('private_project_access').map((g: any) => ({ id: g.id, level: g.level }))
      : null,
  };
}
// ---------------------------------------------------------------------------------------------- recordings

const ONGOING_MS = 5 * 60 * 1000;

/** The start of the oldest UTC day whose recordings are kept (as the service computes it). */
function retentionCutoff(nowMs: number, days: number): Date {
  return new Date(Math.floor(nowMs / DAY_MS) * DAY_MS - (days - 1) * DAY_MS);
}
const SESSION_ID_RE = /^[A-Za-z0-9-]{1,70}$/;

interface RecordingsEntry {
  id: number;
  session_recording_retention_period_days: number | null;
  events_retention_period_days: number | null;
  /** The caller may read the project's persons (`query` above `none`). */
  persons: boolean;
  /** ILIKE patterns of the start URL rules hiding recordings from the caller, or null. */
  hidden: string[] | null;
}

/**
 * The project of a read of recordings and what the caller may do and watch in it, from the one access statement:
 * 404 outside its organizations or at `none` (project or `session_recording`), 403 for a key restricted elsewhere.
 */
async function enterRecordings(
  principal: Principal,
  rawId: string,
  resource: 'session_recording' | 'query' = 'session_recording',
): Promise<RecordingsEntry> {
  const id =
    /^\d{1,15}$/.test(rawId) && Number(rawId) >= 1 && Number(rawId) <= 2147483647 ? Number(rawId) : null;
  const row =
    id === null ? null : (await pool.query(named(sql.PROJECT_WITH_ACCESS), [id, principal.userId])).rows[0];
  if (!row || row.access_membership_id === null) throw notFound();
  if (principal.scopedOrganizations && !principal.scopedOrganizations.includes(row.organization_id)) {
    throw new HttpError(403, {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'This API key is not allowed to access this organization.',
      attr: null,
    });
  }
  if (principal.scopedTeams && !principal.scopedTeams.includes(row.id)) {
    throw new HttpError(403, {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'This API key is not allowed to access this project.',
      attr: null,
    });
  }
  const access = new MemberAccess(row.access_membership_level, row.id, row.access_rules ?? []);
  if (!reaches(access.resource(resource), 'viewer')) throw notFound();
  const rules: [string, string | null][] = row.access_joined ?? [];
  if (rules.some(([kind]) => kind !== 'start_url')) {
    throw new HttpError(501, {
      type: 'server_error',
      code: 'error',
      detail: 'Person property recording rules are not implemented here.',
      attr: null,
    });
  }
  return {
    id: row.id,
    session_recording_retention_period_days: row.session_recording_retention_period_days,
    events_retention_period_days: row.events_retention_period_days,
    persons: access.resource('query') !== 'none',
    hidden: rules.length ? rules.map(([, pattern]) => globToLike(pattern ?? '')) : null,
  };
}

function personName(properties: Record<string, unknown>, distinctIds: string[]): string {
  for (const key of ['email', 'name']) {
    const value = properties[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return distinctIds[0] ?? '';
}

/* The rows carry the service's camelCase column names; the figures below read them. */
function recordingDto(row: any, nowMs: number, retentionDays: number, persons: boolean) {
  const r = {
    session_id: row.sessionId,
    distinct_id: row.distinctId,
    start_ms: row.startMs,
    end_ms: row.endMs,
    active_ms: row.activeMs,
    click_count: row.clickCount,
    keypress_count: row.keypressCount,
    mouse_activity_count: row.mouseActivityCount,
    console_log_count: row.consoleLogCount,
    console_warn_count: row.consoleWarnCount,
    console_error_count: row.consoleErrorCount,
    start_url: row.startUrl,
    snapshot_source: row.snapshotSource,
    last_event_ms: row.lastEventMs,
    viewed: row.viewed,
    viewers: row.viewers,
    person_id: persons ? row.personId : null,
    person_uuid: row.personUuid,
    person_created_ms: row.personCreatedMs,
  };
  const duration = Math.max(0, Math.floor(r.end_ms / 1000) - Math.floor(r.start_ms / 1000));
  const distinctIds: string[] = row.personDistinctIds ?? [];
  const properties = row.personProperties ?? {};
  const intent = r.active_ms / 1000 + r.click_count + r.keypress_count + r.console_error_count;
  const activity =
    r.mouse_activity_count + duration + r.console_error_count + r.console_log_count + r.console_warn_count;
  const expiry = Math.floor(r.start_ms / DAY_MS) * DAY_MS + retentionDays * DAY_MS;
  return {
    id: r.session_id,
    distinct_id: r.distinct_id,
    viewed: r.viewed,
    viewers: r.viewers,
    recording_duration: duration,
    active_seconds: Math.floor(r.active_ms / 1000),
    inactive_seconds: Math.max(0, Math.floor((duration * 1000 - r.active_ms) / 1000)),
    start_time: new Date(r.start_ms).toISOString(),
    end_time: new Date(r.end_ms).toISOString(),
    click_count: r.click_count,
    keypress_count: r.keypress_count,
    mouse_activity_count: r.mouse_activity_count,
    console_log_count: r.console_log_count,
    console_warn_count: r.console_warn_count,
    console_error_count: r.console_error_count,
    start_url: r.start_url,
    person:
      r.person_id === null || r.person_uuid === null
        ? null
        : {
            id: r.person_id,
            name: personName(properties, distinctIds),
            distinct_ids: JSON.stringify(distinctIds),
            distinct_ids_count: row.personDistinctIdCount ?? 0,
            properties,
            properties_truncated: row.personPropertiesTruncated ?? false,
            created_at: new Date(r.person_created_ms ?? 0).toISOString(),
            uuid: r.person_uuid,
          },
    storage: 'postgres',
    snapshot_source: r.snapshot_source,
    ongoing: nowMs - r.last_event_ms < ONGOING_MS,
    activity_score:
      activity <= 0 ? null : Math.round(Math.min(100, Math.max(0, (intent / activity) * 100)) * 100) / 100,
    retention_period_days: retentionDays,
    expiry_time: new Date(expiry).toISOString(),
    recording_ttl: Math.round((expiry - Math.floor(nowMs / DAY_MS) * DAY_MS) / DAY_MS),
  };
}

const RECORDING_FILTERS = ['date_from', 'date_to', 'distinct_id', 'person_uuid'];

async function listRecordings(req: IncomingMessage, url: URL, projectId: string) {
  const principal = await authenticate(req, 'session_recording:read');
  const page = pageParams(url);
  const project = await enterRecordings(principal, projectId);
  if (RECORDING_FILTERS.some((f) => url.searchParams.has(f))) {
    // The bench lists without filters; the filtered statements are the service's alone.
    throw new HttpError(501, {
      type: 'server_error',
      code: 'error',
      detail: 'Filters are not implemented here.',
      attr: null,
    });
  }
  const nowMs = Date.now();
  const days = project.session_recording_retention_period_days ?? RECORDING_RETENTION_DAYS;
  const params = [project.id, principal.userId, page.limit, page.offset, retentionCutoff(nowMs, days)];
  const { rows } = project.hidden
    ? await pool.query(
        sql.recordingsPageHiding(Math.max(RESTRICTED_COUNT_CAP, page.offset + page.limit + 1)),
        [...params, project.hidden],
      )
    : await pool.query(sql.RECORDINGS_PAGE, params);
  const total = rows.length ? rows[0].total : 0;
  const results = rows
    .filter((r) => r.sessionId !== null)
    .map((r) => recordingDto(r, nowMs, days, project.persons));
  // PostHog's recordings list also answers `has_next` (whether `next` is set).
  const body = envelope(url, page, total, results);
  return { ...body, has_next: body.next !== null };
}

async function retrieveRecording(req: IncomingMessage, projectId: string, id: string) {
  const principal = await authenticate(req, 'session_recording:read');
  const project = await enterRecordings(principal, projectId);
  // The read is logged before it is made (ActivityLogInterceptor), with the route's pattern.
  await pool.query(named(sql.INSERT_READ_LOG), [
    project.id,
    principal.userId,
    principal.keyId,
    'viewed',
    'Replay',
    id.slice(0, 200),
    JSON.stringify({
      id,
      name: null,
      short_id: null,
      type: null,
      changes: null,
      trigger: null,
      context: { method: 'GET', route: '/api/projects/:project_id/session_recordings/:id' },
    }),
    addressOf(req),
    principal.scopedOrganizations,
    principal.scopedTeams,
  ]);
  const nowMs = Date.now();
  const days = project.session_recording_retention_period_days ?? RECORDING_RETENTION_DAYS;
  const params = [project.id, principal.userId, id, retentionCutoff(nowMs, days)];
  const row = SESSION_ID_RE.test(id)
    ? (project.hidden
        ? await pool.query(sql.recordingById(sql.hiddenByUrl(5)), [...params, project.hidden])
        : await pool.query(named(sql.recordingById('')), params)
      ).rows[0]
    : undefined;
  if (!row) throw notFound();
  return recordingDto(row, nowMs, days, project.persons);
}
/* eslint-enable @typescript-eslint/no-explicit-any */

// ---------------------------------------------------------------------------------------------- events

const EVENTS_RETENTION_DAYS = Number(env.EVENTS_RETENTION_DAYS ?? 365);
/** The events list counts matches up to this many (the service's EVENTS_COUNT_CAP). */
const EVENTS_COUNT_CAP = 10_000;
const EVENTS_LIST_MAX_BYTES = Number(env.EVENTS_LIST_MAX_BYTES ?? 8388608);
/** Most bytes of one property value in a list (the service's EVENT_LIST_VALUE_MAX_BYTES). */
const EVENT_LIST_VALUE_MAX_BYTES = 64 * 1024;

/**
 * GET /api/projects/:id/events without filters (the bench sends none): the access statement (the project with
 * the rules, `query` at `viewer` or above, the recording rules hiding sessions), the page, the count up to
 * EVENTS_COUNT_CAP and the persons of the page's distinct ids, as the service sends them.
 */
async function listEvents(req: IncomingMessage, url: URL, projectId: string) {
  const principal = await authenticate(req, 'query:read');
  const page = pageParams(url);
  const project = await enterRecordings(principal, projectId, 'query');
  if ([...url.searchParams.keys()].some((k) => k !== 'limit' && k !== 'offset')) {
    throw new HttpError(501, {
      type: 'server_error',
      code: 'error',
      detail: 'Filters are not implemented here.',
      attr: null,
    });
  }
  if (page.offset + page.limit > EVENTS_COUNT_CAP) {
    throw invalid(
      `'offset' plus 'limit' may be at most ${EVENTS_COUNT_CAP}: page further back with 'before' (the timestamp of the last event of a page).`,
      'offset',
    );
  }
  const days = project.events_retention_period_days ?? EVENTS_RETENTION_DAYS;
  const cutoff = new Date((Math.floor(Date.now() / DAY_MS) - (days - 1)) * DAY_MS);
  const counted: unknown[] = project.hidden ? [project.id, cutoff, project.hidden] : [project.id, cutoff];
  const hiding = project.hidden !== null;
  const { rows } = await pool.query(sql.eventsPage(hiding, page.limit, page.offset), [
    ...counted,
    EVENT_LIST_VALUE_MAX_BYTES,
    EVENTS_LIST_MAX_BYTES,
  ]);
  const total: number = (await pool.query(sql.eventsCount(hiding, EVENTS_COUNT_CAP), counted)).rows[0].n;
  const distinctIds = [...new Set(rows.map((r) => r.distinctId as string))];
  const persons = new Map<string, { isIdentified: boolean; firstDistinctId: string; properties: unknown }>();
  if (distinctIds.length) {
    const found = await pool.query(sql.EVENT_PERSONS, [
      project.id,
      distinctIds,
      ['email', 'name', 'username'],
      1000,
    ]);
    for (const p of found.rows) persons.set(p.distinctId, p);
  }
  const results = rows.map((row) => {
    const person = persons.get(row.distinctId);
    return {
      id: row.uuid,
      uuid: row.uuid,
      event: row.event,
      distinct_id: row.distinctId,
      person_id: row.personId,
      person: person
        ? {
            is_identified: person.isIdentified,
            distinct_ids: [person.firstDistinctId],
            properties: person.properties,
          }
        : null,
      properties: row.properties,
      properties_truncated: row.propertiesTruncated,
      timestamp: new Date(row.timestamp).toISOString(),
      created_at: new Date(row.createdAt).toISOString(),
      elements_chain: row.elementsChain,
      elements: [],
      session_id: row.sessionId,
      window_id: row.windowId,
    };
  });
  // The bench's pages stay far below EVENTS_LIST_MAX_BYTES: none ends early (the service's `nextOffset`).
  return envelope(url, page, total, results);
}

// ---------------------------------------------------------------------------------------------- routing

type Handler = (req: IncomingMessage, url: URL, params: string[]) => Promise<unknown>;

/** The routes; those with a `path` are served by every front (fronts.ts), the capture routes by node:http only. */
const ROUTES: {
  method: FrontRoute['method'];
  pattern: RegExp;
  path?: string;
  scope?: string;
  /** Whether the Nest front validates a DTO on the route (default true; a retrieve takes none: FrontRoute#dto). */
  dto?: boolean;
  status: number;
  handler: Handler;
}[] = [
  {
    method: 'GET',
    pattern: /^\/api\/organizations\/?$/,
    path: '/api/organizations',
    scope: 'organization:read',
    status: 200,
    handler: (req, url) => listOrganizations(req, url),
  },
  {
    method: 'GET',
    pattern: /^\/api\/organizations\/([^/]+)\/?$/,
    path: '/api/organizations/:id',
    scope: 'organization:read',
    dto: false,
    status: 200,
    handler: (req, _url, [id]) => retrieveOrganization(req, id),
  },
  {
    method: 'PATCH',
    pattern: /^\/api\/organizations\/([^/]+)\/?$/,
    path: '/api/organizations/:id',
    scope: 'organization:write',
    status: 200,
    handler: (req, _url, [id]) => patchOrganization(req, id),
  },
  {
    method: 'GET',
    pattern: /^\/api\/organizations\/([^/]+)\/batch_exports\/?$/,
    path: '/api/organizations/:id/batch_exports',
    scope: 'batch_export:read',
    status: 200,
    handler: (req, url, [id]) => listBatchExports(req, url, id),
  },
  {
    method: 'GET',
    pattern: /^\/api\/projects\/([^/]+)\/session_recordings\/?$/,
    path: '/api/projects/:id/session_recordings',
    scope: 'session_recording:read',
    status: 200,
    handler: (req, url, [id]) => listRecordings(req, url, id),
  },
  {
    method: 'GET',
    pattern: /^\/api\/projects\/([^/]+)\/session_recordings\/([^/]+)\/?$/,
    path: '/api/projects/:projectId/session_recordings/:id',
    scope: 'session_recording:read',
    dto: false,
    status: 200,
    handler: (req, _url, [projectId, id]) => retrieveRecording(req, projectId, decodeURIComponent(id)),
  },
  {
    method: 'GET',
    pattern: /^\/api\/projects\/([^/]+)\/events\/?$/,
    path: '/api/projects/:id/events',
    scope: 'query:read',
    status: 200,
    handler: (req, url, [id]) => listEvents(req, url, id),
  },
  {
    method: 'POST',
    pattern: /^\/api\/organizations\/([^/]+)\/invites\/?$/,
    path: '/api/organizations/:id/invites',
    scope: 'organization_member:write',
    status: 201,
    handler: (req, url, [id]) => createInvite(req, url, id),
  },
  {
    method: 'POST',
    pattern: /^\/s\/?$/,
    status: 200,
    handler: (req, url) => capture(pool, req, url),
  },
  {
    method: 'POST',
    pattern: /^\/(e|batch)\/?$/,
    status: 200,
    handler: (req, url) => captureEvents(pool, req, url),
  },
];

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** A handler's failure as the service answers it: its error body, or a 500 (logged). */
function failure(err: unknown): { status: number; body: unknown } {
  if (err instanceof HttpError || err instanceof CaptureError) return { status: err.status, body: err.body };
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  return {
    status: 500,
    body: { type: 'server_error', code: 'error', detail: 'A server error occurred.', attr: null },
  };
}

function plainServer(): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    if (url.pathname === '/healthz') return send(res, 200, { status: 'ok' });
    for (const route of ROUTES) {
      const match = route.pattern.exec(url.pathname);
      if (!match || route.method !== req.method) continue;
      route.handler(req, url, match.slice(1)).then(
        (body) => send(res, route.status, body),
        (err: unknown) => {
          const { status, body } = failure(err);
          send(res, status, body);
        },
      );
      return;
    }
    send(res, 404, { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
  }).listen(PORT, '127.0.0.1');
}

/** BASELINE_FRONT (default `node`): the same handlers behind node:http alone, Express or Nest (fronts.ts). */
const FRONT = (env.BASELINE_FRONT ?? 'node') as Front;
if (!FRONTS.includes(FRONT)) throw new Error(`BASELINE_FRONT must be one of ${FRONTS.join(', ')}`);
const PORT = Number(env.PORT ?? 3100);
const frontRoutes = ROUTES.flatMap((r) =>
  r.path && r.scope
    ? [
        {
          method: r.method,
          path: r.path,
          scope: r.scope,
          status: r.status,
          handler: r.handler,
          dto: r.dto ?? true,
        },
      ]
    : [],
);
const server =
  FRONT === 'node'
    ? plainServer()
    : FRONT === 'express'
      ? listenExpress(frontRoutes, { send, failure }, PORT)
      : await listenNest(frontRoutes, { send, failure }, PORT, FRONT === 'nest-logged');
const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
