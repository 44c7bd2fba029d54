import {
  type Parser,
  byteSize,
  int,
  oneOf,
  str,
  setting,
  type SettingsTable,
  type SettingValues,
} from '../config/settings.js';

/** A key-encryption key: base64 of 32 random bytes (`openssl rand -base64 32`). */
const keyEncryptionKey: Parser<string> = Object.assign(
  (raw: string, name: string): string => {
    const value = raw.trim();
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || Buffer.from(value, 'base64').length !== 32) {
      throw new Error(`${name} is invalid: expected base64 of 32 bytes (openssl rand -base64 32)`);
    }
    return value;
  },
  { accepts: 'base64 of 32 bytes' },
);

/**
 * The settings of the session-recordings feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const SESSION_RECORDINGS_SETTINGS = {
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
    'Where snapshot chunks are written: `postgres` (gzip rows in the database) or `s3` (objects in RECORDING_S3_BUCKET, laid out as RECORDING_S3_LAYOUT says; metadata and the chunk index stay in the database). Chunks already stored are read from wherever they are; `npm run cli -- recordings migrate-storage` moves them.',
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
  RECORDING_KEY_ENCRYPTION_KEY: setting(
    keyEncryptionKey,
    '',
    "Key-encryption key of the recordings' data keys (base64 of 32 bytes, `openssl rand -base64 32`). Set, every chunk written into a packed object is encrypted (AES-256-GCM) with a random key of its recording kept in the database wrapped by this one, and deleting a recording destroys its key, so its bytes in shared objects are unreadable at once. Required in production with RECORDING_STORAGE=s3 and the packed layout. Keep it apart from database backups; losing it loses every encrypted recording (it cannot be rotated yet).",
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
    'Time allowed for one object store request (connect plus response); past it the request is retried (3 attempts) and then the capture (per-chunk layout) or the read answers 503, or the packer retries on its next tick. A read of a chunk (its attempts and its body) takes at most this long in all.',
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
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof SESSION_RECORDINGS_SETTINGS> {}
}
