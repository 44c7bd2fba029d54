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
import {
  badText,
  CaptureError,
  decode,
  invalid,
  isObject,
  nonEmpty,
  type Person,
  type Project,
  projectByToken,
  resolvePersons,
} from './capture.js';
import * as sql from './sql.js';

type Json = Record<string, unknown>;
const DAY_MS = 86_400_000;
/** EVENT_PROPERTIES_MAX_BYTES and PERSON_PROPERTIES_MAX_BYTES of the service (its defaults). */
const MAX_PROPERTIES_BYTES = 1024 * 1024;
const PERSON_MAX_BYTES = 512 * 1024;
const INSERT_BYTES = 4 * 1024 * 1024;
const FUTURE_MS = 23 * 3600 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RETRYABLE = new Set(['40P01', '40001']);
/** Distinct ids never merged on (the service's, PostHog's). */
const ILLEGAL_IDS = new Set([
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
  'null',
  '0',
  '[object object]',
  'nan',
  '',
]);
/** Projects whose `ingested_event` is known to be set: their inserts no longer ask to set it (as the service). */
const ingestedTeams = new Set<number>();

const hasKeys = (o: Json | null) => o !== null && Object.keys(o).length > 0;

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
  processPerson: boolean;
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
  // The other distinct id an `$identify`, `$create_alias` or `$merge_dangerously` links (the service's rules).
  const other =
    name === '$identify'
      ? properties.$anon_distinct_id
      : name === '$create_alias' || name === '$merge_dangerously'
        ? properties.alias
        : undefined;
  const otherId = typeof other === 'string' || typeof other === 'number' ? String(other) : null;
  const link =
    otherId !== null &&
    otherId.length <= 200 &&
    otherId !== distinctId &&
    !badText(otherId) &&
    !ILLEGAL_IDS.has(otherId.trim().toLowerCase()) &&
    !ILLEGAL_IDS.has(distinctId.trim().toLowerCase())
      ? otherId
      : null;
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
    processPerson: properties.$process_person_profile !== false,
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

/** A distinct id put on a person, in a savepoint; the person it is on (another, when a concurrent one won). */
async function addDistinctId(
  client: pg.PoolClient,
  teamId: number,
  id: string,
  personId: number,
): Promise<number> {
  await client.query('SAVEPOINT person_alias');
  try {
    await client.query(sql.INSERT_DISTINCT_ID, [teamId, id, personId]);
    await client.query('RELEASE SAVEPOINT person_alias');
    return personId;
  } catch (error) {
    if ((error as { code?: string }).code !== '23505') throw error;
    await client.query('ROLLBACK TO SAVEPOINT person_alias');
    return (await personIds(client, teamId, [id])).get(id) as number;
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

/**
 * `$identify`: the two ids on one person (the service's rules: new person, join, or merge the newer one into the
 * older one); returns that person, which is marked identified.
 */
async function link(client: pg.PoolClient, teamId: number, a: string, b: string, now: Date): Promise<number> {
  const found = await personIds(client, teamId, [a, b].sort());
  const pa = found.get(a);
  const pb = found.get(b);
  if (pa === undefined && pb === undefined)
    return addDistinctId(client, teamId, b, await createPerson(client, teamId, a, now));
  if (pa === undefined) return addDistinctId(client, teamId, a, pb as number);
  if (pb === undefined) return addDistinctId(client, teamId, b, pa);
  if (pa === pb) return pa;
  const [into, from] = pa < pb ? [pa, pb] : [pb, pa];
  await client.query(sql.REASSIGN_RECORDINGS, [teamId, from, into]);
  await client.query(sql.MERGE_DISTINCT_IDS, [teamId, from, into]);
  await client.query(sql.MERGE_PROPERTIES, [teamId, from, into]);
  await client.query(sql.DELETE_PERSON, [teamId, from]);
  return into;
}

interface Update {
  set: Json;
  setOnce: Json;
  identify: boolean;
}

/**
 * One update per person, the events folded in order (`$set_once` of a key set before is ignored, `$set` wins),
 * then applied one person at a time in person id order: the link's mark, the row locked and read, the merged
 * properties written when they change.
 */
async function applyPersons(
  client: pg.PoolClient,
  teamId: number,
  rows: Row[],
  found: Map<string, Person>,
  identified: Set<number>,
): Promise<void> {
  const updates = new Map<number, Update>();
  const updateOf = (person: number) => {
    let u = updates.get(person);
    if (!u) updates.set(person, (u = { set: {}, setOnce: {}, identify: false }));
    return u;
  };
  for (const row of rows) {
    const person = found.get(row.distinctId)?.id;
    if (person === undefined || (!hasKeys(row.set) && !hasKeys(row.setOnce))) continue;
    const u = updateOf(person);
    for (const [k, v] of Object.entries(row.setOnce ?? {}))
      if (!(k in u.set) && !(k in u.setOnce)) u.setOnce[k] = v;
    for (const [k, v] of Object.entries(row.set ?? {})) {
      delete u.setOnce[k];
      u.set[k] = v;
    }
  }
  for (const person of identified) updateOf(person).identify = true;
  for (const person of [...updates.keys()].sort((x, y) => x - y)) {
    const u = updates.get(person) as Update;
    if (u.identify) await client.query(sql.MARK_IDENTIFIED, [teamId, person]);
    if (!hasKeys(u.set) && !hasKeys(u.setOnce)) continue;
    const { rows: locked } = await client.query<{ properties: string | null }>(sql.LOCK_PERSON_PROPERTIES, [
      teamId,
      person,
      2 * PERSON_MAX_BYTES,
    ]);
    if (!locked.length) continue;
    const existing = JSON.parse(locked[0].properties ?? '{}') as Json;
    const absent = Object.keys(u.setOnce).filter((k) => !(k in existing));
    if (!hasKeys(u.set) && !absent.length) continue;
    const next: Json = { ...existing };
    for (const k of absent) next[k] = u.setOnce[k];
    Object.assign(next, u.set);
    await client.query(sql.REPLACE_PERSON_PROPERTIES, [teamId, person, JSON.stringify(next)]);
  }
}

/** The rows of one INSERT each: at most 1000 rows and 4 MB of properties JSON (the service's bounds). */
function statementsOf(rows: Row[]): Row[][] {
  const parts: Row[][] = [];
  let part: Row[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (part.length && (part.length >= 1000 || bytes + row.properties.length > INSERT_BYTES)) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(row);
    bytes += row.properties.length;
  }
  if (part.length) parts.push(part);
  return parts;
}

/** Persons, then the rows; returns how many rows were stored (the service's statements, in its order). */
async function store(client: pg.PoolClient, project: Project, rows: Row[], now: Date): Promise<number> {
  const teamId = project.id;
  const withPerson = rows.filter((r) => r.processPerson);
  if (withPerson.length) {
    const identified = new Set<number>();
    for (const row of withPerson)
      if (row.link) identified.add(await link(client, teamId, row.distinctId, row.link, now));
    const ids = [...new Set(withPerson.map((r) => r.distinctId))].sort();
    const found = await resolvePersons(client, teamId, ids, now);
    await applyPersons(client, teamId, withPerson, found, identified);
    for (const row of withPerson) row.personId = found.get(row.distinctId)?.uuid ?? null;
  }
  const personless = rows.filter((r) => !r.processPerson);
  if (personless.length) {
    const { rows: found } = await client.query<Person & { distinct_id: string }>(sql.PERSONS_BY_DISTINCT_ID, [
      teamId,
      [...new Set(personless.map((r) => r.distinctId))],
    ]);
    const byId = new Map(found.map((p) => [p.distinct_id, p.uuid]));
    for (const row of personless) row.personId = byId.get(row.distinctId) ?? null;
  }
  let stored = 0;
  for (const part of statementsOf(rows)) {
    const mark = !project.ingested_event && !ingestedTeams.has(teamId) && stored === 0;
    const { rows: result } = await client.query<{ stored: unknown[] }>(sql.INSERT_EVENTS, [
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
      mark,
    ]);
    stored += result[0].stored.length;
  }
  return stored;
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
      const stored = await store(client, project, rows, now);
      await client.query('COMMIT');
      if (stored > 0 && !ingestedTeams.has(project.id)) {
        if (ingestedTeams.size >= 100_000) ingestedTeams.clear();
        ingestedTeams.add(project.id);
      }
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
