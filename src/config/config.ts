/**
 * Every setting of the service comes from an environment variable, parsed and validated here once at boot.
 * `parseConfig` is pure (it takes the environment as an argument) so it can be unit-tested; it collects every
 * bad variable before failing, so an operator fixes them all in one go.
 *
 * To add a setting: add it to `SETTINGS` (with a parser and a default) and to `.env.example`, then regenerate
 * docs/configuration.md (`npm run build && npm run docs:config`); unit tests fail while either is out of step.
 * The type of `AppConfig` follows from `SETTINGS`.
 */
import { isIP } from 'node:net';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses one variable's value; `accepts` says what it takes (shown in docs/configuration.md). */
type Parser<T> = ((raw: string, name: string) => T) & { accepts?: string };

const accepting = <T>(accepts: string, parse: (raw: string, name: string) => T): Parser<T> =>
  Object.assign(parse, { accepts });

const fail = (name: string, raw: string, expected: string): never => {
  throw new Error(`${name}=${JSON.stringify(raw)} is invalid: expected ${expected}`);
};

export const int = (min: number, max: number): Parser<number> =>
  accepting(`integer ${min}–${max}`, (raw, name) => {
    if (!/^-?\d+$/.test(raw.trim())) fail(name, raw, `an integer between ${min} and ${max}`);
    const value = Number(raw);
    if (value < min || value > max) fail(name, raw, `an integer between ${min} and ${max}`);
    return value;
  });

export const bool: Parser<boolean> = accepting('true or false', (raw, name) => {
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  return fail(name, raw, 'true or false');
});

export const str: Parser<string> = accepting('text', (raw) => raw);

export const oneOf = <T extends string>(...values: T[]): Parser<T> =>
  accepting(values.join(', '), (raw, name) =>
    (values as string[]).includes(raw) ? (raw as T) : fail(name, raw, `one of ${values.join(', ')}`),
  );

const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
/** A byte size such as `1mb`, `512kb` or `1048576`; returned in bytes. */
export const byteSize: Parser<number> = accepting('size: 512kb, 1mb, bytes', (raw, name) => {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(raw.trim());
  if (!m) return fail(name, raw, 'a size such as 1mb, 512kb or a number of bytes');
  const bytes = Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? 'b').toLowerCase()]);
  if (bytes < 1) fail(name, raw, 'a positive size');
  return bytes;
});

/** A byte size (as `byteSize`) between `min` and `max` bytes. */
export const byteSizeBetween = (min: number, max: number): Parser<number> =>
  accepting(`size: ${min}–${max} bytes (512kb, 1mb)`, (raw, name) => {
    const bytes = byteSize(raw, name);
    if (bytes < min || bytes > max) fail(name, raw, `a size between ${min} and ${max} bytes`);
    return bytes;
  });

export const postgresUrl: Parser<string> = accepting('postgres:// URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail(name, raw, 'a postgres://user:password@host:port/database URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    fail(name, raw, 'a postgres:// or postgresql:// URL');
  }
  return raw;
});

export const email: Parser<string> = accepting('e-mail address', (raw, name) =>
  /^[^\s@]+@[^\s@]+$/.test(raw.trim()) ? raw.trim() : fail(name, raw, 'an e-mail address'),
);

/** `false`, `true`, a hop count, or a comma list of trusted addresses/subnets (Express `trust proxy`). */
export const trustProxy: Parser<boolean | number | string> = accepting(
  'false, true, hop count or addresses',
  (raw) => {
    const v = raw.trim();
    if (v === '' || /^(false|0|no|off)$/i.test(v)) return false;
    if (/^(true|yes|on)$/i.test(v)) return true;
    if (/^\d+$/.test(v)) return Number(v);
    return v;
  },
);

/**
 * DNS servers for domain verification: a comma list of `ip` or `ip:port` (IPv6 as `[ip]:port` or bare), returned
 * in the form `dns.Resolver#setServers` takes; null (unset) means the system's servers.
 */
export const dnsServers: Parser<string[] | null> = accepting('ip[:port] list', (raw, name) => {
  const expected = 'a comma list of ip or ip:port (IPv6 as [ip]:port)';
  const servers = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!servers.length) return null;
  return servers.map((server) => {
    const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(server) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(server);
    const host = m ? m[1] : server;
    const port = m?.[2];
    if (isIP(host) === 0) return fail(name, raw, expected);
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return fail(name, raw, expected);
    if (isIP(host) === 6) return port ? `[${host}]:${Number(port)}` : host;
    return port ? `${host}:${Number(port)}` : host;
  });
});

/** An `smtp://` or `smtps://` URL (credentials, if any, in the user-info part). */
export const smtpUrl: Parser<string> = accepting('smtp:// or smtps:// URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'an smtp://user:password@host:port or smtps://… URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') fail(name, raw, 'an smtp:// or smtps:// URL');
  if (!url.hostname) fail(name, raw, 'an SMTP URL with a host');
  return raw.trim();
});

/** A sender: `address@host` or `Display Name <address@host>`. */
export const mailbox: Parser<string> = accepting('address or Name <address>', (raw, name) => {
  const v = raw.trim();
  const address = /^[^\s@<>]+@[^\s@<>]+$/;
  const named = /^[^<>\r\n]*<([^\s@<>]+@[^\s@<>]+)>$/;
  return address.test(v) || named.test(v) ? v : fail(name, raw, 'an address or "Name <address>"');
});

/** An absolute http(s) URL without a trailing slash (links are built by appending paths). */
export const httpUrl: Parser<string> = accepting('http(s) URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(name, raw, 'an http:// or https:// URL');
  if (url.search || url.hash) fail(name, raw, 'a URL without query or fragment');
  return url.href.replace(/\/+$/, '');
});

/** `*`, or a comma list of origins (`https://app.example.com`); null when unset. */
export const corsOrigins: Parser<string[] | null> = accepting('origin list or *', (raw, name) => {
  const origins = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!origins.length) return null;
  if (origins.includes('*'))
    return origins.length === 1 ? ['*'] : fail(name, raw, '* alone or a list of origins');
  return origins.map((origin) => {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return fail(name, raw, 'a comma list of origins such as https://app.example.com, or *');
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin.replace(/\/$/, '')) {
      return fail(name, raw, 'origins only (scheme://host[:port], no path), or *');
    }
    return url.origin;
  });
});

/** A `redis://` or `rediss://` URL. */
export const redisUrl: Parser<string> = accepting('redis:// or rediss:// URL', (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return fail(name, raw, 'a redis://user:password@host:6379/0 or rediss://… URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') fail(name, raw, 'a redis:// or rediss:// URL');
  if (!url.hostname) fail(name, raw, 'a Redis URL with a host');
  return raw.trim();
});

interface Setting<T> {
  parse: Parser<T>;
  default: T;
  description: string;
}
const setting = <T>(parse: Parser<T>, def: T, description: string): Setting<T> => ({
  parse,
  default: def,
  description,
});

export const SETTINGS = {
  NODE_ENV: setting(oneOf('development', 'production', 'test'), 'development', 'Runtime environment.'),
  HOST: setting(
    str,
    '127.0.0.1',
    'Address the HTTP server binds to. The default answers on this machine only; 0.0.0.0 listens on every IPv4 interface (the container image and the Kubernetes manifests set it).',
  ),
  PORT: setting(int(0, 65535), 3000, 'HTTP port.'),
  METRICS_PORT: setting(
    int(0, 65535),
    0,
    'Port of the Prometheus metrics server (GET /metrics, bound to HOST, apart from the API). 0: no metrics server.',
  ),
  LOG_LEVEL: setting(
    oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    'info',
    'Minimum level of the logs; debug also shows the framework start-up lines.',
  ),
  LOG_FORMAT: setting(
    oneOf('json', 'pretty'),
    'json',
    'json: one JSON object per line; pretty: human-readable lines (development; needs the pino-pretty development dependency).',
  ),
  DATABASE_URL: setting<string | null>(
    postgresUrl,
    null,
    'PostgreSQL connection URL. Unset: an embedded PostgreSQL is started with data under EMBEDDED_PG_DATA_DIR.',
  ),
  DATABASE_POOL_SIZE: setting(int(1, 200), 10, 'Maximum connections in the pool of each process.'),
  DATABASE_CONNECT_TIMEOUT_MS: setting(int(100, 600000), 5000, 'Timeout for opening a database connection.'),
  DATABASE_STATEMENT_TIMEOUT_MS: setting(
    int(0, 3600000),
    30000,
    'Server-side statement timeout per query (0 disables).',
  ),
  EMBEDDED_PG_DATA_DIR: setting(str, '.data/postgres', 'Data directory of the embedded PostgreSQL.'),
  EMBEDDED_PG_PORT: setting(int(1, 65535), 54329, 'Port of the embedded PostgreSQL (loopback only).'),
  MIGRATIONS_RUN: setting<boolean | null>(
    bool,
    null,
    'Apply pending migrations at boot. Default: on for the embedded database, off otherwise (run `node dist/cli.js migrate`).',
  ),
  BODY_LIMIT: setting(byteSize, 1024 * 1024, 'Largest accepted JSON request body (e.g. 1mb); larger is 413.'),
  BODY_JSON_MAX_DEPTH: setting(
    int(1, 1000),
    64,
    'Deepest nesting of objects and arrays accepted in a JSON request body; deeper is 400 (checked before parsing).',
  ),
  API_JSON_MAX_VALUES: setting(
    int(1, 100000000),
    100000,
    'Most JSON values (objects, arrays, strings, numbers, literals; keys excluded) in a JSON request body of /api (and of the other routes taking plain JSON); more is 413, counted on the raw text before it is parsed.',
  ),
  API_LARGE_BODY_BYTES: setting(
    byteSize,
    64 * 1024,
    'A /api request body larger than this (declared by Content-Length; or of unknown size: chunked or compressed) is large: it needs one of API_LARGE_BODY_CONCURRENCY slots.',
  ),
  API_LARGE_BODY_CONCURRENCY: setting(
    int(0, 100000),
    8,
    'Large /api request bodies (API_LARGE_BODY_BYTES) one process reads, parses and handles at once; one more is answered 503 `unavailable` with Retry-After: 1, its body unread. 0: no cap.',
  ),
  API_AUTH_FAILURE_LIMIT: setting(
    int(0, 1000000),
    60,
    'Failed authentications (unknown or revoked key, malformed Authorization header) one client address may make per API_AUTH_FAILURE_WINDOW_SECONDS; past it, its requests with a key get 429 with Retry-After until the window ends, the key not looked up. Per process. 0: no limit.',
  ),
  API_AUTH_FAILURE_WINDOW_SECONDS: setting(
    int(1, 86400),
    60,
    'Length of the window in which API_AUTH_FAILURE_LIMIT counts failed authentications of one address.',
  ),
  API_AUTH_FAILURE_MAX_ADDRESSES: setting(
    int(1, 10000000),
    10000,
    'Client addresses whose failed authentications one process tracks at once (bounds its memory); a new address beyond it drops the expired windows, then the oldest tracked address.',
  ),
  RECORDING_BODY_LIMIT: setting(
    byteSize,
    25 * 1024 * 1024,
    'Largest recording capture request (POST /s/, e.g. 25mb): bounds both the bytes received (at most CAPTURE_MEMORY_BUDGET / PUBLIC_MAX_CONCURRENT_PER_IP of them) and the decompressed body; larger is 413.',
  ),
  CAPTURE_MAX_EVENTS: setting(
    int(1, 10000000),
    50000,
    'Most events in one capture request (POST /s/); more is 413, found while decoding.',
  ),
  CAPTURE_MAX_SNAPSHOT_EVENTS: setting(
    int(1, 10000000),
    100000,
    'Most rrweb events in the $snapshot_data of one $snapshot event; more is 413, found while decoding.',
  ),
  CAPTURE_MAX_SESSIONS: setting(
    int(1, 100000),
    100,
    'Most recordings (distinct `$session_id` values) in one capture request (POST /s/); more is 413 and nothing of the request is stored. posthog-js sends one.',
  ),
  PERSON_SET_MAX_KEYS: setting(
    int(1, 1000000),
    1000,
    'Most values one `$set` or `$set_once` may hold (each key of an object and each element of an array, nested included), and so what one request may set on one person. In capture a larger one is dropped (its event is stored, a warning logged; the parser stops building it at once); the API answers 400.',
  ),
  PERSON_SET_MAX_BYTES: setting(
    byteSize,
    64 * 1024,
    'Most bytes (compact JSON) of what one request sets on one person (`$set` and `$set_once`). In capture a `$set` past it is dropped (its event is stored, a warning logged); the API answers 400.',
  ),
  PERSON_PROPERTIES_MAX_BYTES: setting(
    byteSizeBetween(1024, 1024 * 1024),
    512 * 1024,
    "Most bytes (compact JSON) of one person's properties. An update that would pass it is not applied (capture: dropped and logged; the API: 400); a person already past it (stored before the limit, or the limit lowered) is trimmed on its next update, largest properties first, keeping the identifying ones (email, name, initial and campaign properties).",
  ),
  PUBLIC_JSON_MAX_DEPTH: setting(
    int(2, 10000),
    1000,
    'Deepest nesting of arrays and objects in a body of POST /s/, /flags or /decide; deeper is 400.',
  ),
  PUBLIC_JSON_MAX_VALUES: setting(
    int(1, 100000000),
    1000000,
    'Most JSON values (objects, arrays, strings, numbers, literals) in a body of POST /s/, /flags or /decide; more is 413, found while decoding.',
  ),
  PUBLIC_JSON_MAX_KEYS: setting(
    int(1, 100000000),
    10000,
    'Most keys (members) in one JSON object of a body of POST /s/, /flags or /decide; more is 413, found while decoding.',
  ),
  PUBLIC_MAX_CONCURRENT_PER_IP: setting(
    int(0, 100000),
    8,
    'Requests one client address may have in flight on /s/, /flags, /decide and /array/:token/config; one more is 429 with Retry-After. 0: no cap.',
  ),
  CAPTURE_MEMORY_BUDGET: setting(
    byteSize,
    96 * 1024 * 1024,
    'Memory the capture requests of one process may hold at once, as estimated while reading and decoding (the received bytes collected and their copies, 2 bytes per decoded byte, 64 per JSON value); past it the oldest request waits and the others get 503 with Retry-After.',
  ),
  RECORDING_CHUNK_MAX_EVENTS: setting(
    int(1, 1000000),
    10000,
    'Most rrweb events in one stored snapshot chunk (one source of the snapshots API); a request is split into as many chunks as needed.',
  ),
  RECORDING_CHUNK_MAX_BYTES: setting(
    byteSize,
    2 * 1024 * 1024,
    'Most bytes (uncompressed JSON lines) in one stored snapshot chunk; a single larger rrweb event is a chunk of its own.',
  ),
  RECORDING_SESSION_MAX_EVENTS: setting(
    int(1, 1000000000),
    2000000,
    'Most rrweb events stored for one recording; snapshots past it are dropped (the request still answers 200) and a warning is logged.',
  ),
  RECORDING_SESSION_MAX_BYTES: setting(
    byteSize,
    1024 * 1024 * 1024,
    'Most bytes (uncompressed JSON lines) stored for one recording; snapshots past it are dropped (the request still answers 200) and a warning is logged.',
  ),
  RECORDING_STORAGE: setting(
    oneOf('postgres', 's3'),
    'postgres',
    'Where snapshot chunks are written: `postgres` (gzip rows in the database) or `s3` (objects in RECORDING_S3_BUCKET, laid out as RECORDING_S3_LAYOUT says; metadata and the chunk index stay in the database). Chunks already stored are read from wherever they are; `node dist/cli.js recordings migrate-storage` moves them.',
  ),
  RECORDING_S3_LAYOUT: setting(
    oneOf('packed', 'per-chunk'),
    'packed',
    'With RECORDING_STORAGE=s3: `packed` commits each chunk to the database first (capture never waits on the store) and the packer moves committed chunks into shared packed objects, each chunk read back by byte range; `per-chunk` uploads one object per chunk inside the capture request (the earlier layout). Both layouts stay readable whichever is set.',
  ),
  RECORDING_PACK_MAX_BYTES: setting(
    byteSize,
    32 * 1024 * 1024,
    'Largest packed object (gzip bytes of its chunks): a packer pass takes the oldest unpacked chunks up to this size (a single larger chunk is an object of its own). A pass starts once this many bytes wait or the oldest waiting chunk is RECORDING_PACK_MAX_AGE_SECONDS old.',
  ),
  RECORDING_PACK_MAX_AGE_SECONDS: setting(
    int(0, 86400),
    10,
    'Age of the oldest unpacked chunk at which the packer writes a packed object even when fewer than RECORDING_PACK_MAX_BYTES wait.',
  ),
  RECORDING_PACK_INTERVAL_SECONDS: setting(
    int(0, 3600),
    2,
    'Seconds between two packer ticks of this process (RECORDING_STORAGE=s3, RECORDING_S3_LAYOUT=packed). Safe on every replica: one packs at a time (an advisory lock), every replica refreshes the backlog its capture checks. 0: no packer here.',
  ),
  RECORDING_UNPACKED_MAX_BYTES: setting(
    byteSize,
    4 * 1024 * 1024 * 1024,
    'Unpacked chunk bytes waiting in the database (the object store down or too slow) past which capture answers 503 with Retry-After instead of filling the database; alert well below it on recording_unpacked_bytes.',
  ),
  RECORDING_S3_BUCKET: setting(
    str,
    '',
    'Bucket of the snapshot objects; required when RECORDING_STORAGE=s3 or when migrating to or from it. Region and credentials come from the usual AWS variables (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, or an instance/IRSA role).',
  ),
  RECORDING_S3_PREFIX: setting(
    str,
    'session_recordings/',
    'Key prefix of the snapshot objects in the bucket; the orphan sweep lists and deletes only under it.',
  ),
  RECORDING_S3_ENDPOINT: setting(
    str,
    '',
    'Endpoint of an S3-compatible store (MinIO, Ceph, R2…), e.g. http://minio:9000; empty for AWS S3. Path-style addressing is used with an endpoint.',
  ),
  RECORDING_S3_TIMEOUT_MS: setting(
    int(100, 600000),
    15000,
    'Time allowed for one object store request (connect plus response); past it the request is retried (3 attempts) and then the capture (per-chunk layout) or the read answers 503, or the packer retries on its next tick.',
  ),
  RECORDING_ORPHAN_GRACE_MINUTES: setting(
    int(1, 100000),
    60,
    'Age after which an object in the bucket that no snapshot row points at (its capture failed after the upload, or its recording was deleted) is removed by the orphan sweep.',
  ),
  RECORDING_ORPHAN_SWEEP_INTERVAL_SECONDS: setting(
    int(0, 604800),
    3600,
    'Seconds between two orphan sweeps of the recording object store (only with RECORDING_S3_BUCKET set; one replica sweeps at a time). 0: no sweep.',
  ),
  RECORDING_RETENTION_DAYS: setting(
    int(1, 3650),
    30,
    'Days a recording is kept, from the start of the (UTC) day it started, unless its project sets `session_recording_retention_period_days`: its `expiry_time` and `recording_ttl`. Expired recordings leave the API at once and are purged.',
  ),
  RECORDING_PURGE_INTERVAL_SECONDS: setting(
    int(0, 604800),
    3600,
    'Seconds between two purges of expired recordings (with their snapshots, stored objects, views and sharing) in this process; 0: no purge here. Safe on every replica: each recording is deleted once.',
  ),
  RECORDING_PURGE_BATCH_SIZE: setting(
    int(1, 100000),
    500,
    'Most expired recordings one purge transaction deletes; a purge runs transactions until none is left.',
  ),
  EVENTS_RETENTION_DAYS: setting(
    int(1, 3650),
    365,
    "Days an analytics event is kept, from the start of the (UTC) day of its timestamp, unless its project sets `events_retention_period_days`. Expired events leave the API at once; whole day partitions are dropped once every project's events in them have expired. Events older than this when captured are dropped (counted in the log).",
  ),
  EVENTS_PURGE_INTERVAL_SECONDS: setting(
    int(0, 604800),
    3600,
    'Seconds between two runs of the event partition task in this process: it creates the day partitions of `events` ahead (today and the next EVENTS_PARTITIONS_AHEAD_DAYS days) and drops or trims expired ones; 0: not in this process (partitions are still created on demand by capture). Safe on every replica.',
  ),
  EVENTS_PARTITIONS_AHEAD_DAYS: setting(
    int(1, 60),
    3,
    'Days after today whose `events` partitions the partition task creates ahead.',
  ),
  EVENT_PROPERTIES_MAX_BYTES: setting(
    int(1024, 16 * 1024 * 1024),
    1024 * 1024,
    "Most bytes of one captured event's properties as JSON (PostHog's 1 MB event limit); a larger event is dropped, counted and logged, and the rest of its batch stored.",
  ),
  MAX_PAGE_LIMIT: setting(int(1, 100000), 1000, 'Largest `limit` accepted by list endpoints.'),
  TRUST_PROXY: setting<boolean | number | string>(
    trustProxy,
    false,
    'Trust X-Forwarded-* headers: false, true, a hop count, or trusted addresses (Express `trust proxy`).',
  ),
  BOOTSTRAP_EMAIL: setting(
    email,
    'admin@localhost',
    'E-mail of the user created with a `*` key on an empty embedded database (with DATABASE_URL no key is created: use `node dist/cli.js keys create`).',
  ),
  INSTANCE_TAG: setting(str, 'none', 'Instance tag reported in Organization.metadata.'),
  SHUTDOWN_TIMEOUT_MS: setting(
    int(0, 600000),
    10000,
    'How long the whole drain after SIGTERM may take (including SHUTDOWN_DELAY_MS); requests still running then are answered 503 and the process exits 1.',
  ),
  SHUTDOWN_DELAY_MS: setting(
    int(0, 600000),
    0,
    'After SIGTERM, keep accepting requests this long while /readyz answers 503, so load balancers stop routing before the listener closes.',
  ),
  REQUEST_TIMEOUT_MS: setting(
    int(100, 3600000),
    30000,
    'Longest a request may take, from receiving it to answering; past it the answer is 503 `timeout` (its work may still complete).',
  ),
  CORS_ORIGINS: setting<string[] | null>(
    corsOrigins,
    null,
    'Origins allowed to call /api from browsers: a comma list of http(s) origins, or *. Unset: no CORS headers.',
  ),
  RATE_LIMIT_ENABLED: setting(
    bool,
    true,
    'Limit requests per personal API key (RATE_LIMIT_BURST per minute and RATE_LIMIT_SUSTAINED per hour); over a limit the answer is 429.',
  ),
  RATE_LIMIT_BURST: setting(int(1, 1000000), 480, 'Requests one API key may make per minute.'),
  RATE_LIMIT_SUSTAINED: setting(int(1, 10000000), 4800, 'Requests one API key may make per hour.'),
  REDIS_URL: setting<string | null>(
    redisUrl,
    null,
    'Redis holding the rate limit counters, shared by every replica (redis://user:password@host:6379/0 or rediss://). Unset: counters in the memory of each process.',
  ),
  REDIS_KEY_PREFIX: setting(str, 'org-admin:', 'Prefix of every Redis key this service writes.'),
  REDIS_TIMEOUT_MS: setting(
    int(10, 60000),
    500,
    'Longest wait for one Redis command; past it (or at once when Redis is unreachable) the request is not rate limited.',
  ),
  REDIS_FAIL_OPEN_MS: setting(
    int(100, 3600000),
    30000,
    'After a Redis failure, how long requests skip Redis (not rate limited, no waiting); then one background probe checks whether it answers again.',
  ),
  SWAGGER_ENABLED: setting(bool, true, 'Serve Swagger UI at /docs and the OpenAPI document at /docs-json.'),
  DNS_SERVERS: setting<string[] | null>(
    dnsServers,
    null,
    'DNS servers that domain verification asks for TXT records: a comma list of ip or ip:port. Unset: the system resolvers.',
  ),
  DNS_TIMEOUT_MS: setting(
    int(100, 60000),
    3000,
    'How long one domain verification waits for DNS answers in total.',
  ),
  INVITE_DAYS_VALIDITY: setting(
    int(1, 365),
    3,
    'Days after which an invite expires (`is_expired`); an expired invite can no longer be accepted.',
  ),
  SMTP_URL: setting<string | null>(
    smtpUrl,
    null,
    'SMTP server for invitation e-mails (smtp://user:password@host:587, or smtps:// for implicit TLS). Unset: no e-mail is sent.',
  ),
  SMTP_FROM: setting(
    mailbox,
    'noreply@localhost',
    'Sender of invitation e-mails: an address or "Name <address>".',
  ),
  SMTP_TIMEOUT_MS: setting(
    int(100, 600000),
    10000,
    'Connection, greeting and socket timeout of one SMTP delivery; a request sending invitations waits at most about this long.',
  ),
  PUBLIC_URL: setting(
    httpUrl,
    'http://localhost:3000',
    "The service's public base URL, used in the accept instructions of invitation e-mails.",
  ),
  SCHEDULER_ENABLED: setting(
    bool,
    true,
    'Run the batch export scheduler in this process (safe on every replica: each run is created once).',
  ),
  SCHEDULER_TICK_SECONDS: setting(
    int(1, 3600),
    60,
    'Seconds between two ticks of the batch export scheduler, each creating the runs that have fallen due.',
  ),
  SCHEDULER_MAX_CATCHUP: setting(
    int(1, 100000),
    100,
    'Most runs one scheduler tick creates per batch export when catching up missed intervals after downtime.',
  ),
  BACKFILL_MAX_RUNS: setting(
    int(1, 1000000),
    10000,
    'Most runs (intervals) one batch export backfill may create.',
  ),
  BATCH_EXPORT_WORKERS: setting(
    bool,
    true,
    'Run batch export workers in this process: they claim the runs waiting in the job queue (pg-boss, on this database) and deliver their data. Any number of processes may run them; false leaves the runs to other processes.',
  ),
  BATCH_EXPORT_WORKER_CONCURRENCY: setting(
    int(1, 64),
    2,
    'Most batch export runs one process executes at a time (runs of one export always execute one after the other).',
  ),
  BATCH_EXPORT_POLL_INTERVAL_MS: setting(
    int(100, 600000),
    2000,
    'How often an idle batch export worker looks for a run to claim.',
  ),
  BATCH_EXPORT_MAX_ATTEMPTS: setting(
    int(1, 100),
    5,
    'Attempts of a batch export run that fails with a retryable error (destination unreachable, server error) before it ends FailedRetryable.',
  ),
  BATCH_EXPORT_RETRY_DELAY_SECONDS: setting(
    int(1, 86400),
    30,
    'Base delay before a failed batch export run is tried again; it doubles with each attempt (with jitter), up to an hour.',
  ),
  BATCH_EXPORT_HEARTBEAT_SECONDS: setting(
    int(10, 3600),
    30,
    'A running batch export run reports to the queue several times within this period; a run whose worker stopped reporting (killed, lost its database) is taken up again by another worker after it.',
  ),
  BATCH_EXPORT_SUPERVISE_SECONDS: setting(
    int(1, 3600),
    10,
    'How often worker processes look for runs whose worker stopped reporting, and do the queue upkeep.',
  ),
  BATCH_EXPORT_DRAIN_TIMEOUT_MS: setting(
    int(0, 86400000),
    8000,
    'On shutdown, how long the runs in progress may take to finish; runs still going then are stopped and handed back to the queue for another worker. Keep it below SHUTDOWN_TIMEOUT_MS.',
  ),
  BATCH_EXPORT_PAGE_SIZE: setting(
    int(1, 100000),
    5000,
    'Rows a batch export run reads from the database at a time (memory per run grows with it).',
  ),
  BATCH_EXPORT_HTTP_MAX_RETRIES: setting(
    int(0, 20),
    5,
    'Retries of one batch POSTed by an HTTP batch export when the receiver answers 429 or 5xx or cannot be reached.',
  ),
  BATCH_EXPORT_HTTP_RETRY_DELAY_MS: setting(
    int(1, 600000),
    1000,
    'First delay before retrying an HTTP batch export POST; it doubles with each retry (Retry-After is honoured when longer, up to a minute).',
  ),
  BATCH_EXPORT_HTTP_TIMEOUT_MS: setting(
    int(100, 3600000),
    60000,
    'Longest one request of an HTTP batch export may take in total, from connecting to the last byte of the answer (a receiver that answers slowly is cut off at it, and the batch retried).',
  ),
  BATCH_EXPORT_STATEMENT_TIMEOUT_MS: setting(
    int(100, 86400000),
    600000,
    "Longest one statement on a Postgres or Redshift batch export destination may run (the destination's statement_timeout, and a timer in this service); a statement blocked or running longer fails the attempt, which is retried. It bounds the load of a run's rows too.",
  ),
  BATCH_EXPORT_ATTEMPT_TIMEOUT_MS: setting(
    int(1000, 86400000),
    3600000,
    'Longest one attempt of a batch export run may take; past it the attempt is stopped, its worker slot freed and the run retried (BATCH_EXPORT_MAX_ATTEMPTS).',
  ),
  BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: setting(
    int(0, 10000),
    2,
    "Most batch export runs of one organization executing at a time over all workers; an organization's further runs wait in the queue without taking a worker slot. 0: no limit.",
  ),
  BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: setting(
    bool,
    false,
    'Let batch exports deliver to hosts that resolve to loopback, private, link-local or cloud metadata addresses (also through the IPv6 forms that carry such an IPv4 address), in every environment.',
  ),
  PLUGIN_REPOSITORY_URL: setting<string | null>(
    httpUrl,
    null,
    'URL of the plugin repository catalog (a JSON list of plugins). Unset: the catalog shipped with the service.',
  ),
  PLUGIN_REPOSITORY_TIMEOUT_MS: setting(
    int(100, 120000),
    5000,
    'How long a fetch of PLUGIN_REPOSITORY_URL may take; past it the request answers 504.',
  ),
  PLUGIN_REPOSITORY_CACHE_SECONDS: setting(
    int(0, 86400),
    300,
    'Seconds a fetched plugin repository catalog is reused (0: fetched on every use).',
  ),
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
export type AppConfigValues = { readonly [K in SettingName]: ValueOf<(typeof SETTINGS)[K]> };

/** Parses and validates the environment; throws a ConfigError naming every bad variable. */
export function parseConfig(env: Record<string, string | undefined>): AppConfigValues {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      out[name] = s.default;
      continue;
    }
    try {
      out[name] = s.parse(raw, name);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (!problems.length && out.RECORDING_STORAGE === 's3' && !String(out.RECORDING_S3_BUCKET).trim()) {
    problems.push('RECORDING_S3_BUCKET is required when RECORDING_STORAGE=s3');
  }
  if (problems.length) throw new ConfigError(problems);
  return out as AppConfigValues;
}

/**
 * The injectable configuration. Providers receive it by type (`constructor(private config: AppConfig)`).
 * Tests build one from a custom environment with `AppConfig.fromEnv({...})`.
 */
export class AppConfig {
  private constructor(
    readonly values: AppConfigValues,
    /** True when the database is the embedded PostgreSQL started by this process. */
    readonly embeddedDatabase = false,
  ) {}

  static fromEnv(env: Record<string, string | undefined> = process.env): AppConfig {
    return new AppConfig(parseConfig(env));
  }

  /** The same configuration pointing at the embedded database's URL. */
  withEmbeddedDatabase(url: string): AppConfig {
    return new AppConfig({ ...this.values, DATABASE_URL: url }, true);
  }

  get<K extends SettingName>(name: K): AppConfigValues[K] {
    return this.values[name];
  }

  /** The database URL; only null before the embedded database has been started. */
  get databaseUrl(): string {
    const url = this.values.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not resolved: start the embedded database first');
    return url;
  }

  /** Whether batch exports may deliver to private addresses (never unless BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS). */
  get allowPrivateDestinations(): boolean {
    return this.values.BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS;
  }

  /**
   * The bytes one capture request (`POST /s/`) may receive: RECORDING_BODY_LIMIT, but at most
   * CAPTURE_MEMORY_BUDGET / PUBLIC_MAX_CONCURRENT_PER_IP, so that the requests one address may have in flight
   * can never together receive more than the budget (docs/limits.md). With no per-address cap (0), the
   * setting alone.
   */
  get recordingReceiveLimit(): number {
    const limit = this.values.RECORDING_BODY_LIMIT;
    const perAddress = this.values.PUBLIC_MAX_CONCURRENT_PER_IP;
    if (perAddress <= 0) return limit;
    return Math.max(1, Math.min(limit, Math.floor(this.values.CAPTURE_MEMORY_BUDGET / perAddress)));
  }

  /** Migrations at boot: explicit MIGRATIONS_RUN, else only for the embedded database. */
  get runMigrationsAtBoot(): boolean {
    return this.values.MIGRATIONS_RUN ?? this.embeddedDatabase;
  }
}
