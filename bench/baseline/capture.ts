/**
 * The baseline's POST /s/: recording capture with `node:http`, `pg` and zlib only (and the AWS SDK's PutObject
 * when RECORDING_STORAGE=s3). It does the work the service does for a posthog-js body — gunzip, JSON parse, the
 * project by its token, the `$snapshot` events' validation essentials, then in one transaction: the sessions
 * that exist, persons and distinct ids (found, the missing ones created, in one statement), new recordings
 * inserted pending, the recordings locked, event keys (ON CONFLICT DO NOTHING: a re-sent event is skipped),
 * the metadata update, and the snapshot chunks (gzip of JSON lines) as rows or as objects, and last the new
 * recordings published (counted) — with the same statements, so the bench can check both sides send the same SQL.
 *
 * Environment (as the service): RECORDING_STORAGE (postgres), RECORDING_S3_BUCKET, RECORDING_S3_PREFIX
 * (session_recordings/), RECORDING_S3_ENDPOINT, AWS_REGION and credentials.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { DeleteObjectsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type pg from 'pg';
import * as sql from './sql.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

const env = process.env;
const BODY_LIMIT = 25 * 1024 * 1024;
const CHUNK_MAX_EVENTS = 10_000;
const CHUNK_MAX_BYTES = 2 * 1024 * 1024;
const SESSION_MAX_EVENTS = 2_000_000;
const SESSION_MAX_BYTES = 1024 * 1024 * 1024;
const EVENT_KEYS_PER_STATEMENT = 5000;
const INSERT_BYTES = 4 * 1024 * 1024;
const SESSION_ID = /^[A-Za-z0-9-]+$/;
const MAX_TIMESTAMP = 253402300799999;
const ACTIVITY_THRESHOLD_MS = 5000;
const RETRYABLE = new Set(['40P01', '40001']);

/** What capture reads of a project (the query selects every column, as the service's). */
export interface Project {
  id: number;
  ingested_event: boolean;
}

/** Projects of recently used tokens, reused for 5 s as the service does (the same statements on both sides). */
const projects = new Map<string, { project: Project; until: number }>();

/** The project of a capture token: from the 5 s cache, else one query (a token that has none is not kept). */
export async function projectByToken(pool: pg.Pool, token: string): Promise<Project | null> {
  const now = Date.now();
  const known = projects.get(token);
  if (known && known.until > now) return known.project;
  const project = (await pool.query<Project>(sql.PROJECT_BY_TOKEN, [token])).rows[0] ?? null;
  projects.delete(token);
  if (project) {
    if (projects.size >= 10_000) projects.delete(projects.keys().next().value!);
    projects.set(token, { project, until: now + 5000 });
  }
  return project;
}

export class CaptureError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; code: string; detail: string; attr: string | null },
  ) {
    super(body.detail);
  }
}

export const invalid = (detail: string, attr: string | null, code = 'invalid_input') =>
  new CaptureError(400, { type: 'validation_error', code, detail, attr });

type Json = Record<string, unknown>;
interface RrwebEvent {
  type: number;
  timestamp: number;
  data?: unknown;
}
interface Snapshot {
  key: string;
  sessionId: string;
  windowId: string;
  distinctId: string;
  source: 'web' | 'mobile';
  events: RrwebEvent[];
}

export const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
export const nonEmpty = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const badText = (v: unknown) =>
  typeof v === 'string' && (v.includes('\u0000') || LONE_SURROGATE.test(v));

// ---------------------------------------------------------------------------------------------- decoding

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT)
      throw new CaptureError(413, {
        type: 'invalid_request',
        code: 'payload_too_large',
        detail: 'Request body too large.',
        attr: null,
      });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function decode(req: IncomingMessage, url: URL): Promise<unknown> {
  let bytes = await readBody(req);
  if (!bytes.length) throw invalid('The request body is empty.', null, 'required');
  const compression = url.searchParams.get('compression')?.trim().toLowerCase();
  if (compression === 'gzip' || compression === 'gzip-js' || (bytes[0] === 0x1f && bytes[1] === 0x8b)) {
    try {
      bytes = await gunzipAsync(bytes, { maxOutputLength: BODY_LIMIT });
    } catch {
      throw invalid('The request body is not valid gzip data.', null);
    }
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid('The request body is not valid JSON.', null, 'parse_error');
  }
}

function idField(value: unknown, attr: string, label: string): string {
  if (value === undefined || value === null || value === '')
    throw invalid(`${label} is required.`, attr, 'required');
  if (typeof value !== 'string') throw invalid(`${label} must be a string.`, attr);
  if (value.length > 70) throw invalid(`${label} must have at most 70 characters.`, attr, 'max_length');
  if (!SESSION_ID.test(value)) throw invalid(`${label} may contain only letters, digits and '-'.`, attr);
  return value;
}

function snapshotOf(event: Json, prefix: string): Snapshot | null {
  const p = event.properties;
  if (!isObject(p)) throw invalid('properties must be a JSON object.', `${prefix}properties`);
  const at = (name: string) => `${prefix}properties__${name}`;
  if (badText(p.$session_id)) return null;
  const sessionId = idField(p.$session_id, at('$session_id'), '$session_id');
  const rawWindow = badText(p.$window_id) ? undefined : p.$window_id;
  const windowId =
    rawWindow === undefined || rawWindow === null
      ? sessionId
      : idField(rawWindow, at('$window_id'), '$window_id');
  const data = p.$snapshot_data;
  const list = isObject(data) && typeof data.type === 'number' ? [data] : data;
  if (!Array.isArray(list) || !list.length)
    throw invalid('$snapshot_data must be an array of rrweb events.', at('$snapshot_data'));
  for (let j = 0; j < list.length; j++) {
    const e: unknown = list[j];
    if (!isObject(e) || typeof e.type !== 'number' || !Number.isInteger(e.type))
      throw invalid('An rrweb event needs an integer type.', `${at('$snapshot_data')}__${j}__type`);
    const ts = e.timestamp;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0 || ts > MAX_TIMESTAMP)
      throw invalid(
        'An rrweb event needs a timestamp in milliseconds since the epoch.',
        `${at('$snapshot_data')}__${j}__timestamp`,
      );
  }
  const rawDistinct = event.distinct_id ?? p.distinct_id;
  if (badText(rawDistinct)) return null;
  const distinctId =
    typeof rawDistinct === 'number' && Number.isFinite(rawDistinct) ? String(rawDistinct) : rawDistinct;
  if (typeof distinctId !== 'string' || distinctId.trim() === '')
    throw invalid('distinct_id is required.', `${prefix}distinct_id`, 'required');
  if (distinctId.length > 200)
    throw invalid('distinct_id must have at most 200 characters.', `${prefix}distinct_id`, 'max_length');
  const events = list as RrwebEvent[];
  const uuid = badText(event.uuid) ? undefined : event.uuid;
  let key: string;
  if (uuid === undefined || uuid === null) {
    key = `sha256:${createHash('sha256').update(windowId).update('\n').update(JSON.stringify(events)).digest('hex')}`;
  } else if (typeof uuid !== 'string' || uuid.trim() === '' || uuid.length > 100) {
    throw invalid('uuid must be a non-empty string of at most 100 characters.', `${prefix}uuid`);
  } else key = uuid;
  return {
    key,
    sessionId,
    windowId,
    distinctId,
    source: p.$snapshot_source === 'mobile' ? 'mobile' : 'web',
    events,
  };
}

// ---------------------------------------------------------------------------------------------- metadata

interface Metadata {
  eventCount: number;
  first: number;
  last: number;
  clicks: number;
  keypresses: number;
  mouse: number;
  logs: number;
  warns: number;
  errors: number;
  activeMs: number;
  startUrl: { url: string; timestamp: number } | null;
}

const ACTIVE = new Set([1, 2, 3, 4, 5, 6, 7, 12]);
const CLICKS = new Set([2, 3, 4, 9]);

function metadataOf(events: RrwebEvent[]): Metadata {
  let sorted = events;
  for (let i = 1; i < events.length; i++) {
    if (events[i].timestamp < events[i - 1].timestamp) {
      sorted = events
        .map((e, index) => ({ e, index }))
        .sort((a, b) => a.e.timestamp - b.e.timestamp || a.index - b.index)
        .map((x) => x.e);
      break;
    }
  }
  const m: Metadata = {
    eventCount: 0,
    first: Infinity,
    last: -Infinity,
    clicks: 0,
    keypresses: 0,
    mouse: 0,
    logs: 0,
    warns: 0,
    errors: 0,
    activeMs: 0,
    startUrl: null,
  };
  let segment: { start: number; end: number; active: boolean } | null = null;
  let lastActive: number | null = null;
  const close = () => {
    if (segment?.active) m.activeMs += Math.max(1, segment.end - segment.start);
  };
  for (const e of sorted) {
    m.eventCount++;
    m.first = Math.min(m.first, e.timestamp);
    m.last = Math.max(m.last, e.timestamp);
    const data = isObject(e.data) ? e.data : null;
    const source = e.type === 3 && typeof data?.source === 'number' ? data.source : null;
    if (source === 2 && typeof data?.type === 'number' && CLICKS.has(data.type)) m.clicks++;
    if (source === 5) m.keypresses++;
    if (source === 1 || source === 2 || source === 6) m.mouse++;
    if (e.type === 6 && data?.plugin === 'rrweb/console@1') {
      const level = isObject(data.payload) ? data.payload.level : undefined;
      if (level === 'warn' || level === 'countReset') m.warns++;
      else if (level === 'error' || level === 'assert') m.errors++;
      else m.logs++;
    }
    if (m.startUrl === null) {
      const href = data?.href ?? (isObject(data?.payload) ? data.payload.href : undefined);
      if (typeof href === 'string' && href !== '' && !badText(href))
        m.startUrl = { url: href, timestamp: e.timestamp };
    }
    const active = source !== null && ACTIVE.has(source);
    if (!segment) segment = { start: e.timestamp, end: e.timestamp, active };
    else if (
      active &&
      (!segment.active || (lastActive !== null && e.timestamp - lastActive > ACTIVITY_THRESHOLD_MS))
    ) {
      close();
      segment = { start: e.timestamp, end: e.timestamp, active: true };
    } else segment.end = e.timestamp;
    if (active) lastActive = e.timestamp;
  }
  close();
  return m;
}

// ---------------------------------------------------------------------------------------------- storage

interface Chunk {
  sessionId: string;
  windowId: string;
  first: Date;
  last: Date;
  count: number;
  data: Buffer | null;
  objectKey?: string;
}

interface WindowLines {
  windowId: string;
  timestamps: number[];
  lines: string[];
  sizes: number[];
}

async function chunksOf(sessionId: string, w: WindowLines): Promise<Chunk[]> {
  let order: number[] | null = null;
  for (let i = 1; i < w.timestamps.length; i++) {
    if (w.timestamps[i] < w.timestamps[i - 1]) {
      order = w.timestamps.map((_, j) => j).sort((a, b) => w.timestamps[a] - w.timestamps[b] || a - b);
      break;
    }
  }
  const groups: { first: number; last: number; lines: string[] }[] = [];
  let current: { first: number; last: number; lines: string[] } | null = null;
  let bytes = 0;
  for (let k = 0; k < w.lines.length; k++) {
    const i = order ? order[k] : k;
    if (current && (current.lines.length >= CHUNK_MAX_EVENTS || bytes + w.sizes[i] > CHUNK_MAX_BYTES)) {
      groups.push(current);
      current = null;
    }
    if (!current) {
      current = { first: w.timestamps[i], last: 0, lines: [] };
      bytes = 0;
    }
    current.lines.push(w.lines[i]);
    current.last = w.timestamps[i];
    bytes += w.sizes[i];
  }
  if (current) groups.push(current);
  return Promise.all(
    groups.map(async (g) => ({
      sessionId,
      windowId: w.windowId,
      first: new Date(g.first),
      last: new Date(g.last),
      count: g.lines.length,
      data: await gzipAsync(`${g.lines.join('\n')}\n`),
    })),
  );
}

const S3_PREFIX = env.RECORDING_S3_PREFIX ?? 'session_recordings/';
const BUCKET = (env.RECORDING_S3_BUCKET ?? '').trim();
const toS3 = env.RECORDING_STORAGE === 's3';
const s3 = toS3
  ? new S3Client({
      endpoint: env.RECORDING_S3_ENDPOINT?.trim() || undefined,
      forcePathStyle: Boolean(env.RECORDING_S3_ENDPOINT?.trim()),
      region: env.AWS_REGION || 'us-east-1',
      maxAttempts: 3,
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 50 }),
        httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 50 }),
        connectionTimeout: 15000,
        requestTimeout: 15000,
      },
    })
  : null;

function objectKey(teamId: number, sessionId: string): string {
  const session = sessionId.replace(
    /[^A-Za-z0-9._-]/g,
    (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  return `${S3_PREFIX}${teamId}/${session}/${randomUUID()}`;
}

/** Object uploads of one request in flight at once (as the service). */
const UPLOAD_CONCURRENCY = 8;

/** Uploads the chunks (RECORDING_STORAGE=s3), noting each acknowledged key in `uploaded`; then inserts the rows. */
async function insertChunks(
  client: pg.PoolClient,
  teamId: number,
  chunks: Chunk[],
  now: Date,
  uploaded: string[],
): Promise<void> {
  if (s3) {
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const c = chunks[next++];
        const key = objectKey(teamId, c.sessionId);
        try {
          await s3.send(
            new PutObjectCommand({
              Bucket: BUCKET,
              Key: key,
              Body: c.data as Buffer,
              ContentType: 'application/jsonl',
              ContentEncoding: 'gzip',
            }),
          );
        } catch (error) {
          throw new CaptureError(503, {
            type: 'server_error',
            code: 'unavailable',
            detail: `The recording store is temporarily unavailable (${String(error)}).`,
            attr: null,
          });
        }
        uploaded.push(key);
        c.objectKey = key;
        c.data = null;
      }
    };
    await Promise.all(Array.from({ length: Math.min(UPLOAD_CONCURRENCY, chunks.length) }, worker));
  }
  for (let i = 0; i < chunks.length;) {
    const group: Chunk[] = [];
    let size = 0;
    while (i < chunks.length && (!group.length || size + (chunks[i].data?.length ?? 0) <= INSERT_BYTES)) {
      size += chunks[i].data?.length ?? 0;
      group.push(chunks[i++]);
    }
    await client.query(sql.INSERT_SNAPSHOTS, [
      teamId,
      now,
      group.map((c) => c.sessionId),
      group.map((c) => c.windowId),
      group.map((c) => c.first),
      group.map((c) => c.last),
      group.map((c) => c.count),
      group.map((c) => c.data),
      group.map((c) => c.objectKey ?? null),
    ]);
  }
}

/** Removes the objects of a write that did not commit (best effort, as the service). */
async function discard(keys: string[]): Promise<void> {
  if (!s3 || !keys.length) return;
  await s3
    .send(
      new DeleteObjectsCommand({
        Bucket: BUCKET,
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
      }),
    )
    .catch(() => undefined);
}

// ---------------------------------------------------------------------------------------------- ingestion

export type Person = { id: number; uuid: string };

/**
 * The persons of these (sorted) distinct ids, the missing ones created, in one statement (as the service's
 * PersonsRepository.resolveDistinctIds); a distinct id a concurrent creation took keeps that person, the one
 * made here is deleted again.
 */
export async function resolvePersons(
  client: pg.PoolClient,
  teamId: number,
  ids: string[],
  now: Date,
): Promise<Map<string, Person>> {
  const out = new Map<string, Person>();
  if (!ids.length) return out;
  const { rows } = await client.query<Person & { distinct_id: string; kept: boolean }>(sql.RESOLVE_PERSONS, [
    teamId,
    ids,
    now,
  ]);
  const lost = rows.filter((r) => !r.kept);
  for (const r of rows) if (r.kept) out.set(r.distinct_id, { id: r.id, uuid: r.uuid });
  if (lost.length) {
    await client.query(sql.DELETE_PERSONS, [teamId, lost.map((r) => r.id)]);
    const winners = await client.query<Person & { distinct_id: string }>(sql.PERSONS_BY_DISTINCT_ID, [
      teamId,
      lost.map((r) => r.distinct_id),
    ]);
    for (const w of winners.rows) out.set(w.distinct_id, { id: w.id, uuid: w.uuid });
  }
  return out;
}

async function ingestIn(
  client: pg.PoolClient,
  teamId: number,
  all: Snapshot[],
  uploaded: string[],
): Promise<void> {
  const now = new Date();
  const bySession = new Map<string, Snapshot[]>();
  const seen = new Set<string>();
  for (const s of all) {
    const id = `${s.sessionId}\n${s.key}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const list = bySession.get(s.sessionId);
    if (list) list.push(s);
    else bySession.set(s.sessionId, [s]);
  }
  const existingRows = await client.query<{ session_id: string; deleted: boolean }>(sql.EXISTING_SESSIONS, [
    teamId,
    [...bySession.keys()].sort(),
  ]);
  const existing = new Map(existingRows.rows.map((r) => [r.session_id, r.deleted]));
  for (const sessionId of [...bySession.keys()])
    if (existing.get(sessionId) === true) bySession.delete(sessionId);
  if (!bySession.size) return;

  // Persons: found by distinct id, the missing ones created, in one statement (as the service).
  const distinctIds = new Set<string>();
  for (const list of bySession.values()) for (const s of list) distinctIds.add(s.distinctId);
  const persons = await resolvePersons(client, teamId, [...distinctIds].sort(), now);

  // Recordings: the new ones inserted pending (not counted yet), then all locked in session id order.
  const fresh = [...bySession.entries()]
    .filter(([id]) => !existing.has(id))
    .map(([sessionId, list]) => {
      let start = Infinity;
      let end = -Infinity;
      for (const s of list)
        for (const e of s.events) {
          if (e.timestamp < start) start = e.timestamp;
          if (e.timestamp > end) end = e.timestamp;
        }
      return {
        sessionId,
        distinctId: list[0].distinctId,
        personId: persons.get(list[0].distinctId)?.id ?? null,
        start: new Date(start),
        end: new Date(end),
        source: list[0].source,
      };
    })
    .sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
  let inserted: string[] = [];
  if (fresh.length) {
    const rows = await client.query<{ session_id: string }>(sql.INSERT_RECORDINGS, [
      teamId,
      now,
      fresh.map((r) => r.sessionId),
      fresh.map((r) => r.distinctId),
      fresh.map((r) => r.personId),
      fresh.map((r) => r.start),
      fresh.map((r) => r.end),
      fresh.map((r) => r.source),
    ]);
    inserted = rows.rows.map((r) => r.session_id);
  }
  const sessionIds = [...bySession.keys()].sort();
  const lockedRows = await client.query<{
    session_id: string;
    deleted: boolean;
    event_count: number;
    snapshot_bytes: string;
  }>(sql.LOCK_SESSIONS, [teamId, sessionIds]);
  const locked = new Map(lockedRows.rows.map((r) => [r.session_id, r]));

  const chunks: Chunk[] = [];
  for (const sessionId of sessionIds) {
    const state = locked.get(sessionId);
    const list = bySession.get(sessionId) as Snapshot[];
    if (!state || state.deleted) continue;
    const keys = list.map((s) => s.key);
    const inserted = new Set<string>();
    for (let i = 0; i < keys.length; i += EVENT_KEYS_PER_STATEMENT) {
      const rows = await client.query<{ event_key: string }>(sql.INSERT_EVENT_KEYS, [
        teamId,
        sessionId,
        keys.slice(i, i + EVENT_KEYS_PER_STATEMENT),
      ]);
      for (const r of rows.rows) inserted.add(r.event_key);
    }
    const accepted = list.filter((s) => inserted.has(s.key));
    if (!accepted.length) continue;
    const windows = new Map<string, WindowLines>();
    const kept: RrwebEvent[] = [];
    let events = state.event_count;
    let bytes = Number(state.snapshot_bytes);
    let capped = false;
    for (const s of accepted) {
      if (capped || events + s.events.length > SESSION_MAX_EVENTS) {
        capped = true;
        continue;
      }
      let w = windows.get(s.windowId);
      if (!w) windows.set(s.windowId, (w = { windowId: s.windowId, timestamps: [], lines: [], sizes: [] }));
      const mark = w.lines.length;
      let size = 0;
      for (const e of s.events) {
        const line = JSON.stringify([s.windowId, e]);
        const n = Buffer.byteLength(line) + 1;
        w.timestamps.push(e.timestamp);
        w.lines.push(line);
        w.sizes.push(n);
        size += n;
      }
      if (bytes + size > SESSION_MAX_BYTES) {
        w.timestamps.length = w.lines.length = w.sizes.length = mark;
        capped = true;
        continue;
      }
      events += s.events.length;
      bytes += size;
      for (const e of s.events) kept.push(e);
    }
    if (!kept.length) continue;
    const m = metadataOf(kept);
    await client.query(sql.ADD_METADATA, [
      teamId,
      sessionId,
      new Date(m.first),
      new Date(m.last),
      m.clicks,
      m.keypresses,
      m.mouse,
      m.logs,
      m.warns,
      m.errors,
      m.activeMs,
      m.eventCount,
      m.startUrl?.url ?? null,
      m.startUrl ? new Date(m.startUrl.timestamp) : null,
      now,
      bytes - Number(state.snapshot_bytes),
    ]);
    for (const w of windows.values()) chunks.push(...(await chunksOf(sessionId, w)));
  }
  await insertChunks(client, teamId, chunks, now, uploaded);
  // Last: the new recordings go live, and into the project's counter (held until the commit only).
  if (inserted.length) await client.query(sql.PUBLISH_RECORDINGS, [teamId, inserted.sort()]);
}

/** POST /s/: 200 `{"status":"Ok"}`, or a CaptureError. */
export async function capture(pool: pg.Pool, req: IncomingMessage, url: URL): Promise<{ status: string }> {
  const payload = await decode(req, url);
  let list: unknown[];
  let batchToken: string | null = null;
  let container: 'array' | 'batch' | 'single' = 'array';
  if (Array.isArray(payload)) list = payload;
  else if (isObject(payload) && Array.isArray(payload.batch)) {
    list = payload.batch;
    batchToken = nonEmpty(payload.api_key) ?? nonEmpty(payload.token);
    container = 'batch';
  } else if (isObject(payload)) {
    list = [payload];
    container = 'single';
  } else throw invalid('Expected a JSON array of events or one event object.', null);
  if (!list.length) throw invalid('The request contains no events.', null, 'required');
  const first = list[0];
  const token =
    batchToken ??
    (isObject(first)
      ? (nonEmpty(first.token) ??
        nonEmpty(first.$token) ??
        nonEmpty(first.api_key) ??
        (isObject(first.properties) ? nonEmpty(first.properties.token) : null))
      : null);
  if (!token)
    throw new CaptureError(401, {
      type: 'authentication_error',
      code: 'not_authenticated',
      detail: 'No project API key found.',
      attr: 'token',
    });
  const project = token.length > 64 || badText(token) ? null : await projectByToken(pool, token);
  if (!project)
    throw new CaptureError(401, {
      type: 'authentication_error',
      code: 'authentication_failed',
      detail: 'Project API key invalid.',
      attr: 'token',
    });
  const snapshots: Snapshot[] = [];
  for (let i = 0; i < list.length; i++) {
    const event = list[i];
    const prefix = container === 'single' ? '' : container === 'batch' ? `batch__${i}__` : `${i}__`;
    if (!isObject(event))
      throw invalid(`Event ${i} is not a JSON object.`, prefix.replace(/__$/, '') || null);
    if (event.event !== '$snapshot') continue;
    const s = snapshotOf(event, prefix);
    if (s) snapshots.push(s);
  }
  if (!snapshots.length) return { status: 'Ok' };
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    const uploaded: string[] = [];
    let beforeCommit = false;
    try {
      await client.query('START TRANSACTION');
      try {
        await ingestIn(client, project.id, snapshots, uploaded);
      } catch (error) {
        beforeCommit = true;
        throw error;
      }
      await client.query('COMMIT');
      return { status: 'Ok' };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (beforeCommit) await discard(uploaded);
      const code = (error as { code?: string }).code;
      if (!code || !RETRYABLE.has(code) || attempt >= 3) throw error;
    } finally {
      client.release();
    }
  }
}
