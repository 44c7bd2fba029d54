import { createHash, randomUUID } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { GetObjectCommandOutput, LifecycleRule as S3LifecycleRule, S3Client } from '@aws-sdk/client-s3';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import {
  type LifecycleRule,
  type ObjectDigest,
  ObjectStoreUnavailableError,
  SnapshotObjectStore,
} from './snapshot-object-store.js';

const DELETE_BATCH = 1000;

type S3Sdk = typeof import('@aws-sdk/client-s3');
/** The SDK's module and the store's client, made by the first request to the store. */
interface S3Connection {
  sdk: S3Sdk;
  client: S3Client;
}

type Body = NonNullable<GetObjectCommandOutput['Body']>;

/** `read(body)`, the body's stream destroyed (its socket let go) when `signal` aborts. */
async function readBody<T>(body: Body, signal: AbortSignal, read: (body: Body) => Promise<T>): Promise<T> {
  const stream = body as unknown as { destroy?(error?: Error): void };
  const stop = () => stream.destroy?.(signal.reason as Error);
  if (signal.aborted) stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await read(body);
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** The bytes of an object's body. */
async function bodyBytes(body: GetObjectCommandOutput['Body'], signal: AbortSignal): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  return readBody(body, signal, async (b) => {
    // A view of the bytes the SDK collected, not a copy of them.
    const bytes = await b.transformToByteArray();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  });
}

/** The SHA-256 and length of an object's body, hashed piece by piece as the socket delivers it. */
async function bodyDigest(body: GetObjectCommandOutput['Body'], signal: AbortSignal): Promise<ObjectDigest> {
  const hash = createHash('sha256');
  let bytes = 0;
  if (body) {
    await readBody(body, signal, async (b) => {
      for await (const piece of b as unknown as AsyncIterable<Uint8Array>) {
        hash.update(piece);
        bytes += piece.length;
      }
    });
  }
  return { sha256: hash.digest('hex'), bytes };
}
/** Characters of a session id kept verbatim in an object key; others are percent-encoded. */
const KEY_SAFE = /[^A-Za-z0-9._-]/g;

/**
 * Snapshot chunks as objects in an S3-compatible store, through the AWS SDK: `<prefix><team>/<session>/<uuid>`.
 * Keys are never reused, so a retried capture that uploads again can never overwrite a chunk a row points at.
 */
@Injectable()
export class S3SnapshotObjectStore extends SnapshotObjectStore implements OnModuleDestroy {
  readonly configured: boolean;
  private readonly bucket: string;
  private readonly prefix: string;
  /**
   * The client, made by the first request to the store: the AWS SDK (about 4 MB of heap once loaded) is imported
   * then, not at start, so a process with no bucket configured (or that never reads one) neither carries it nor
   * has its garbage collector mark it.
   */
  private connection: Promise<S3Connection> | null = null;
  private client: S3Client | null = null;

  constructor(private readonly config: AppConfig) {
    super();
    this.bucket = config.get('RECORDING_S3_BUCKET').trim();
    this.prefix = config.get('RECORDING_S3_PREFIX');
    this.configured = this.bucket !== '';
  }

  /** The SDK and the client (rejects when no bucket is configured). */
  private s3(): Promise<S3Connection> {
    if (!this.configured) {
      return Promise.reject(
        new Error('RECORDING_S3_BUCKET is not set: the recording object store is not configured'),
      );
    }
    this.connection ??= import('@aws-sdk/client-s3').then((sdk) => {
      const endpoint = this.config.get('RECORDING_S3_ENDPOINT').trim() || undefined;
      const timeout = this.config.get('RECORDING_S3_TIMEOUT_MS');
      this.client = new sdk.S3Client({
        endpoint,
        forcePathStyle: Boolean(endpoint),
        // The SDK reads AWS_REGION; a store behind an endpoint often has none.
        region: process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
        maxAttempts: 3,
        requestHandler: {
          httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 50 }),
          httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 50 }),
          connectionTimeout: timeout,
          requestTimeout: timeout,
        },
      });
      return { sdk, client: this.client };
    });
    return this.connection;
  }

  newKey(teamId: number, sessionId: string): string {
    return this.keyOf(teamId, sessionId, randomUUID());
  }

  chunkKey(teamId: number, sessionId: string, id: string): string {
    return this.keyOf(teamId, sessionId, `chunk-${id}`);
  }

  packedKey(at: Date, retentionDays: number): string {
    return `${this.prefix}packed/r${retentionDays}/${at.toISOString().slice(0, 10)}/${randomUUID()}`;
  }

  async lifecycleRules(): Promise<LifecycleRule[]> {
    let rules: S3LifecycleRule[];
    try {
      const { sdk, client } = await this.s3();
      const out = await client.send(new sdk.GetBucketLifecycleConfigurationCommand({ Bucket: this.bucket }));
      rules = out.Rules ?? [];
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchLifecycleConfiguration') return [];
      throw new ObjectStoreUnavailableError('read the bucket lifecycle rules', error);
    }
    return rules.map((r) => ({
      id: r.ID ?? '',
      prefix: r.Filter?.Prefix ?? r.Prefix ?? '',
      expirationDays: r.Expiration?.Days ?? 0,
      enabled: r.Status === 'Enabled',
      raw: r,
    }));
  }

  async putLifecycleRules(rules: readonly LifecycleRule[]): Promise<void> {
    try {
      const { sdk, client } = await this.s3();
      await client.send(
        new sdk.PutBucketLifecycleConfigurationCommand({
          Bucket: this.bucket,
          LifecycleConfiguration: {
            Rules: rules.map(
              (r) =>
                (r.raw as S3LifecycleRule | undefined) ?? {
                  ID: r.id,
                  Status: r.enabled ? 'Enabled' : 'Disabled',
                  Filter: { Prefix: r.prefix },
                  Expiration: { Days: r.expirationDays },
                },
            ),
          },
        }),
      );
    } catch (error) {
      throw new ObjectStoreUnavailableError('write the bucket lifecycle rules', error);
    }
  }

  private keyOf(teamId: number, sessionId: string, name: string): string {
    const session = sessionId.replace(KEY_SAFE, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
    return `${this.prefix}${teamId}/${session}/${name}`;
  }

  async put(key: string, data: Buffer): Promise<void> {
    try {
      const { sdk, client } = await this.s3();
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: data,
          ContentType: 'application/jsonl',
          ContentEncoding: 'gzip',
        }),
      );
    } catch (error) {
      throw new ObjectStoreUnavailableError('store a snapshot chunk', error);
    }
  }

  get(key: string): Promise<Buffer | null> {
    return this.readObject(key, undefined, 'read a snapshot chunk', bodyBytes);
  }

  digest(key: string): Promise<ObjectDigest | null> {
    return this.readObject(key, undefined, 'read back a stored object', bodyDigest);
  }

  async getRange(key: string, offset: number, length: number): Promise<Buffer | null> {
    const range = `bytes=${offset}-${offset + length - 1}`;
    const data = await this.readObject(key, range, 'read a snapshot chunk', bodyBytes);
    if (data === null) return null;
    if (data.length !== length) {
      throw new ObjectStoreUnavailableError(
        'read a snapshot chunk',
        new Error(`${key}: asked for ${length} bytes at ${offset}, got ${data.length}`),
      );
    }
    return data;
  }

  /**
   * One GET of the object (or of `range` of it), its body read by `read` within RECORDING_S3_TIMEOUT_MS; null when
   * the object does not exist, any other failure an ObjectStoreUnavailableError saying what failed (`operation`).
   */
  private async readObject<T>(
    key: string,
    range: string | undefined,
    operation: string,
    read: (body: GetObjectCommandOutput['Body'], signal: AbortSignal) => Promise<T>,
  ): Promise<T | null> {
    try {
      const { sdk, client } = await this.s3();
      return await this.readWithin(async (abortSignal) => {
        const out = await client.send(
          new sdk.GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range }),
          { abortSignal },
        );
        return read(out.Body, abortSignal);
      });
    } catch (error) {
      // The SDK's NoSuchKey (its class not loaded until the first request) is known by its name.
      if ((error as { name?: string }).name === 'NoSuchKey') return null;
      throw new ObjectStoreUnavailableError(operation, error);
    }
  }

  /**
   * A read of the store within RECORDING_S3_TIMEOUT_MS in all, its attempts and its body included: the SDK's own
   * timeouts bound each attempt's connection and each silence on its socket, so a store that hangs after its
   * headers or trickles its body would hold a read (and the request waiting for it) without end.
   */
  private async readWithin<T>(read: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const timeoutMs = this.config.get('RECORDING_S3_TIMEOUT_MS');
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`no complete answer within RECORDING_S3_TIMEOUT_MS (${timeoutMs} ms)`);
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      return await Promise.race([read(controller.signal), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      let out;
      try {
        const { sdk, client } = await this.s3();
        out = await client.send(
          new sdk.DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        );
      } catch (error) {
        throw new ObjectStoreUnavailableError('delete snapshot chunks', error);
      }
      const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length) {
        throw new ObjectStoreUnavailableError(
          'delete snapshot chunks',
          new Error(`${failed.length} objects not deleted, first: ${failed[0].Key} (${failed[0].Code})`),
        );
      }
    }
  }

  async list(
    after: string | null,
    limit: number,
    under = '',
  ): Promise<{ objects: { key: string; lastModified: Date }[]; more: boolean }> {
    try {
      const { sdk, client } = await this.s3();
      const out = await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + under,
          MaxKeys: limit,
          ...(after ? { StartAfter: after } : {}),
        }),
      );
      return {
        objects: (out.Contents ?? [])
          .filter((o) => o.Key)
          .map((o) => ({ key: o.Key as string, lastModified: o.LastModified ?? new Date(0) })),
        more: Boolean(out.IsTruncated),
      };
    } catch (error) {
      throw new ObjectStoreUnavailableError('list snapshot chunks', error);
    }
  }

  onModuleDestroy(): void {
    this.client?.destroy();
    this.client = null;
    this.connection = null;
  }
}
