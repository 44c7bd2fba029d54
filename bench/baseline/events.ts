/**
 * The baseline's POST /e/ (and /batch/): analytics event capture with `node:http`, `pg` and zlib only. It does
 * the work the service does for a posthog-js body — gunzip, JSON parse, the project by its token, each event's
 * row (name, distinct id, uuid, properties with `$ip` and without `token`, the elements chain of `$elements`,
 * the skew-corrected timestamp, session and window ids, `$set`/`$set_once`), the day partitions the rows need,
 * then in one transaction: `$identify` links, the persons of the batch (found, the new ones created in one
 * statement), their `$set`/`$set_once` (locked, merged, written), their uuids, and the rows in one multi-row
 * insert — with the same statements as the service, so the bench compares the same database work.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type pg from 'pg';
import { badText, CaptureError, decode, invalid, isObject, nonEmpty, projectByToken } from './capture.js';
import * as sql from './sql.js';

type Json = Record<string, unknown>;
const DAY_MS = 86_400_000;
const MAX_PROPERTIES_BYTES = 1024 * 1024;
const FUTURE_MS = 23 * 3600 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RETRYABLE = new Set(['40P01', '40001']);
const ILLEGAL_IDS = new Set([
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'undefined',
  'null',
  '',
]);

interface Row {
  uuid: string;
  event: string;
  distinctId: string;
  properties: string;
  timestamp: string;
  chain: string;
  sessionId: string | null;
  windowId: string | null;
  set: Json | null;
  setOnce: Json | null;
  link: string | null;
  personId: string | null;
}

const knownDays = new Set<number>();

function time(value: unknown): number | null {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}

function elementText(e: Json): string {
  const classes = typeof e.attr__class === 'string' ? e.attr__class.split(/\s+/).filter(Boolean).sort() : [];
  const attrs: [string, string][] = [];
  if (typeof e.$el_text === 'string' && e.$el_text) attrs.push(['text', e.$el_text]);
  attrs.push(['nth-child', String(e.nth_child ?? 0)], ['nth-of-type', String(e.nth_of_type ?? 0)]);
  if (typeof e.attr__href === 'string') attrs.push(['href', e.attr__href]);
  if (typeof e.attr__id === 'string') attrs.push(['attr_id', e.attr__id]);
  for (const [k, v] of Object.entries(e)) if (k.startsWith('attr__') && v != null) attrs.push([k, String(v)]);
  attrs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const q = (s: string) => s.slice(0, 400).replace(/"/g, '\\"');
  return `${String(e.tag_name ?? '')}${classes.map((c) => `.${c}`).join('')}:${attrs.map(([k, v]) => `${q(k)}="${q(v)}"`).join('')}`;
}

function rowOf(
  event: unknown,
  attr: string,
  ip: string | null,
  now: number,
  sentAt: number | null,
): Row | null {
  if (!isObject(event)) throw invalid('An event is not a JSON object.', attr);
  const name = nonEmpty(event.event);
  if (!name) throw invalid('event is required: the name of the event.', `${attr}event`, 'required');
  const properties = isObject(event.properties) ? { ...event.properties } : {};
  const rawId = event.distinct_id ?? properties.distinct_id;
  if (rawId == null || rawId === '')
    throw invalid('distinct_id is required.', `${attr}distinct_id`, 'required');
  const distinctId = String(rawId).slice(0, 200);
  if (badText(name) || badText(distinctId)) return null;
  let uuid = typeof event.uuid === 'string' ? event.uuid : '';
  if (!uuid) uuid = randomUUID();
  else if (!UUID.test(uuid)) throw invalid('uuid must be a UUID.', `${attr}uuid`);
  if (ip && properties.$ip === undefined) properties.$ip = ip;
  let chain = typeof properties.$elements_chain === 'string' ? properties.$elements_chain : '';
  if (!chain && Array.isArray(properties.$elements))
    chain = properties.$elements.filter(isObject).map(elementText).join(';');
  delete properties.$elements;
  if (chain) properties.$elements_chain = chain;
  delete properties.token;
  const json = JSON.stringify(properties);
  if (Buffer.byteLength(json) > MAX_PROPERTIES_BYTES) return null;
  const ts = time(event.timestamp);
  let ms = ts === null ? now : sentAt !== null ? now + (ts - sentAt) : ts;
  if (ms > now + FUTURE_MS) ms = now;
  const short = (v: unknown) => (typeof v === 'string' && v && v.length <= 70 ? v : null);
  let link: string | null = null;
  if (name === '$identify' && typeof properties.$anon_distinct_id === 'string') {
    const other = properties.$anon_distinct_id;
    if (other !== distinctId && !ILLEGAL_IDS.has(other.toLowerCase())) link = other;
  }
  return {
    uuid: uuid.toLowerCase(),
    event: name.slice(0, 200),
    distinctId,
    properties: json,
    timestamp: new Date(ms).toISOString(),
    chain,
    sessionId: short(properties.$session_id),
    windowId: short(properties.$window_id),
    set: isObject(properties.$set) ? properties.$set : null,
    setOnce: isObject(properties.$set_once) ? properties.$set_once : null,
    link,
    personId: null,
  };
}

async function ensureDay(pool: pg.Pool, day: number): Promise<void> {
  if (knownDays.has(day)) return;
  const name = `events_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replace(/-/g, '')}`;
  const client = await pool.connect();
  try {
    await client.query('START TRANSACTION');
    await client.query(`SET LOCAL lock_timeout = '10s'`);
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('events_partitions'))`);
    const exists = await client.query<{ oid: string | null }>('SELECT to_regclass($1)::text AS oid', [name]);
    if (!exists.rows[0].oid) {
      const from = new Date(day * DAY_MS).toISOString();
      const to = new Date((day + 1) * DAY_MS).toISOString();
      await client.query(
        `CREATE TABLE "${name}" PARTITION OF events FOR VALUES FROM ('${from}') TO ('${to}')`,
      );
      await client.query(`CREATE UNIQUE INDEX "${name}_team_uuid_key" ON "${name}" (team_id, uuid)`);
    }
    await client.query('COMMIT');
    knownDays.add(day);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function personIds(client: pg.PoolClient, teamId: number, ids: string[]): Promise<Map<string, number>> {
  const { rows } = await client.query<{ distinct_id: string; person_id: number }>(
    sql.PERSON_IDS_BY_DISTINCT_ID,
    [teamId, ids],
  );
  return new Map(rows.map((r) => [r.distinct_id, r.person_id]));
}

async function addDistinctId(
  client: pg.PoolClient,
  teamId: number,
  id: string,
  personId: number,
): Promise<void> {
  await client.query('SAVEPOINT person_alias');
  try {
    await client.query(sql.INSERT_DISTINCT_ID, [teamId, id, personId]);
    await client.query('RELEASE SAVEPOINT person_alias');
  } catch (error) {
    if ((error as { code?: string }).code !== '23505') throw error;
    await client.query('ROLLBACK TO SAVEPOINT person_alias');
  }
}

/** A new person for one distinct id, in a savepoint (the `$identify` of two unknown ids), as the service does. */
async function createPerson(client: pg.PoolClient, teamId: number, id: string, now: Date): Promise<number> {
  await client.query('SAVEPOINT person_create');
  try {
    const person = await client.query<{ id: number }>(sql.INSERT_PERSON, [teamId, now]);
    await client.query(sql.INSERT_DISTINCT_ID, [teamId, id, person.rows[0].id]);
    await client.query('RELEASE SAVEPOINT person_create');
    return person.rows[0].id;
  } catch (error) {
    if ((error as { code?: string }).code !== '23505') throw error;
    await client.query('ROLLBACK TO SAVEPOINT person_create');
    return (await personIds(client, teamId, [id])).get(id) as number;
  }
}

/** `$identify`: the two ids on one person (the service's rules: new person, join, or merge the newer one). */
async function link(client: pg.PoolClient, teamId: number, a: string, b: string, now: Date): Promise<void> {
  const found = await personIds(client, teamId, [a, b].sort());
  const pa = found.get(a);
  const pb = found.get(b);
  if (pa === undefined && pb === undefined) {
    await addDistinctId(client, teamId, b, await createPerson(client, teamId, a, now));
  } else if (pa === undefined) await addDistinctId(client, teamId, a, pb as number);
  else if (pb === undefined) await addDistinctId(client, teamId, b, pa);
  else if (pa !== pb) {
    const [into, from] = pa < pb ? [pa, pb] : [pb, pa];
    await client.query(sql.REASSIGN_RECORDINGS, [from, into]);
    await client.query(sql.MERGE_DISTINCT_IDS, [from, into]);
    await client.query(sql.MERGE_PROPERTIES, [from, into]);
    await client.query(sql.DELETE_PERSON, [from]);
  }
}

type Person = { id: number; uuid: string };

/** The persons of these (sorted) distinct ids, the missing ones created, in one statement. */
async function resolvePersons(
  client: pg.PoolClient,
  teamId: number,
  ids: string[],
  now: Date,
): Promise<Map<string, Person>> {
  const out = new Map<string, Person>();
  const { rows } = await client.query<{ distinct_id: string; id: number; uuid: string; kept: boolean }>(
    sql.RESOLVE_PERSONS,
    [teamId, ids, now],
  );
  const lost = rows.filter((r) => !r.kept);
  for (const r of rows) if (r.kept) out.set(r.distinct_id, { id: r.id, uuid: r.uuid });
  if (lost.length) {
    await client.query(sql.DELETE_PERSONS, [lost.map((r) => r.id)]);
    const { rows: winners } = await client.query<{ distinct_id: string; id: number; uuid: string }>(
      sql.PERSONS_BY_DISTINCT_ID,
      [teamId, lost.map((r) => r.distinct_id)],
    );
    for (const w of winners) out.set(w.distinct_id, { id: w.id, uuid: w.uuid });
  }
  return out;
}

async function store(client: pg.PoolClient, teamId: number, rows: Row[], now: Date): Promise<void> {
  for (const row of rows) if (row.link) await link(client, teamId, row.distinctId, row.link, now);
  const found = await resolvePersons(client, teamId, [...new Set(rows.map((r) => r.distinctId))].sort(), now);
  const updates = new Map<number, { set: Json; setOnce: Json }>();
  for (const row of rows) {
    if (!row.set && !row.setOnce) continue;
    const person = (found.get(row.distinctId) as Person).id;
    const u = updates.get(person) ?? { set: {}, setOnce: {} };
    updates.set(person, u);
    Object.assign(u.set, row.set ?? {});
    for (const [k, v] of Object.entries(row.setOnce ?? {})) if (!(k in u.setOnce)) u.setOnce[k] = v;
  }
  for (const person of [...updates.keys()].sort((x, y) => x - y)) {
    const u = updates.get(person) as { set: Json; setOnce: Json };
    const { rows: locked } = await client.query<{ properties: string | null }>(sql.LOCK_PERSON_PROPERTIES, [
      person,
      2 * MAX_PROPERTIES_BYTES,
    ]);
    if (!locked.length) continue;
    const existing = JSON.parse(locked[0].properties ?? '{}') as Json;
    const next = { ...u.setOnce, ...existing, ...u.set };
    if (JSON.stringify(next) !== JSON.stringify(existing))
      await client.query(sql.REPLACE_PERSON_PROPERTIES, [person, JSON.stringify(next)]);
  }
  for (const row of rows) row.personId = found.get(row.distinctId)?.uuid ?? null;
  for (let i = 0; i < rows.length; i += 1000) {
    const part = rows.slice(i, i + 1000);
    await client.query(sql.INSERT_EVENTS, [
      teamId,
      JSON.stringify(part.map((r) => r.uuid)),
      JSON.stringify(part.map((r) => r.event)),
      JSON.stringify(part.map((r) => r.distinctId)),
      JSON.stringify(part.map((r) => r.personId)),
      `[${part.map((r) => r.properties).join(',')}]`,
      JSON.stringify(part.map((r) => r.timestamp)),
      JSON.stringify(part.map((r) => r.chain)),
      JSON.stringify(part.map((r) => r.sessionId)),
      JSON.stringify(part.map((r) => r.windowId)),
      JSON.stringify(part.map((r) => r.set ?? null)),
      JSON.stringify(part.map((r) => r.setOnce ?? null)),
      false,
    ]);
  }
}

export async function captureEvents(
  pool: pg.Pool,
  req: IncomingMessage,
  url: URL,
): Promise<{ status: number }> {
  const now = new Date();
  const payload = await decode(req, url);
  let list: unknown[];
  let batchToken: string | null = null;
  let sentAt: number | null = time(Number(url.searchParams.get('_')) || null);
  let prefix = (i: number) => `${i}__`;
  if (Array.isArray(payload)) list = payload;
  else if (isObject(payload) && Array.isArray(payload.batch)) {
    list = payload.batch;
    batchToken = nonEmpty(payload.api_key) ?? nonEmpty(payload.token);
    sentAt = time(payload.sent_at) ?? sentAt;
    prefix = (i) => `batch__${i}__`;
  } else if (isObject(payload)) {
    list = [payload];
    prefix = () => '';
  } else throw invalid('Expected a JSON array of events or one event object.', null);
  if (!list.length) throw invalid('The request contains no events.', null, 'required');
  const first = list[0];
  const token =
    batchToken ??
    (isObject(first)
      ? (nonEmpty(first.token) ??
        nonEmpty(first.api_key) ??
        (isObject(first.properties) ? nonEmpty(first.properties.token) : null))
      : null);
  const project = token && !badText(token) ? await projectByToken(pool, token) : null;
  if (!project)
    throw new CaptureError(401, {
      type: 'authentication_error',
      code: 'authentication_failed',
      detail: 'Project API key invalid.',
      attr: 'token',
    });
  const ip = req.socket.remoteAddress ?? null;
  const rows: Row[] = [];
  for (let i = 0; i < list.length; i++) {
    const row = rowOf(list[i], prefix(i), ip, now.getTime(), sentAt);
    if (row) rows.push(row);
  }
  if (!rows.length) return { status: 1 };
  for (const day of new Set(rows.map((r) => Math.floor(Date.parse(r.timestamp) / DAY_MS))))
    await ensureDay(pool, day);
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    try {
      await client.query('START TRANSACTION');
      await store(client, project.id, rows, now);
      await client.query('COMMIT');
      return { status: 1 };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      const code = (error as { code?: string }).code;
      if (!code || !RETRYABLE.has(code) || attempt >= 3) throw error;
    } finally {
      client.release();
    }
  }
}
