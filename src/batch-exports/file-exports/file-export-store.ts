import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/config.js';
import type { ObjectSink, ObjectStore } from '../runs/destinations/object-files.js';
import { presignGetUrl } from './presign.js';

/** The AWS SDK, the S3 uploads built on it, and the store's client: loaded by the store's first use. */
interface S3Connection {
  sdk: typeof import('@aws-sdk/client-s3');
  objects: typeof import('../runs/destinations/s3.js');
  client: S3Client;
}

/**
 * Where file exports are stored: the service's object store (RECORDING_S3_BUCKET, RECORDING_S3_ENDPOINT, the AWS
 * variables, as recordings use it), under FILE_EXPORT_S3_PREFIX. `configured` false (no bucket): nothing is
 * stored, the content route streams each file from the database.
 */
@Injectable()
export class FileExportStore implements OnModuleDestroy {
  readonly configured: boolean;
  readonly bucket: string;
  readonly prefix: string;
  private readonly endpoint: string | undefined;
  /**
   * Made by the first use of the store: the AWS SDK (about 4 MB of heap once loaded) is imported then, not at
   * start, so a process that writes no file export neither carries it nor has its garbage collector mark it.
   */
  private connection: Promise<S3Connection> | null = null;
  private client: S3Client | null = null;

  constructor(private readonly config: AppConfig) {
    this.bucket = config.get('RECORDING_S3_BUCKET').trim();
    this.prefix = config.get('FILE_EXPORT_S3_PREFIX');
    this.endpoint = config.get('RECORDING_S3_ENDPOINT').trim() || undefined;
    this.configured = this.bucket !== '';
  }

  private get region(): string {
    return process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1';
  }

  /** The SDK and the client (rejects when no bucket is configured). */
  private s3(): Promise<S3Connection> {
    if (!this.configured) {
      return Promise.reject(new Error('RECORDING_S3_BUCKET is not set: no object store for file exports'));
    }
    this.connection ??= Promise.all([
      import('@aws-sdk/client-s3'),
      import('../runs/destinations/s3.js'),
    ]).then(([sdk, objects]) => {
      const timeout = this.config.get('RECORDING_S3_TIMEOUT_MS');
      this.client = new sdk.S3Client({
        endpoint: this.endpoint,
        forcePathStyle: Boolean(this.endpoint),
        region: this.region,
        maxAttempts: 3,
        requestHandler: {
          httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 20 }),
          httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 20 }),
          connectionTimeout: timeout,
          // A part upload (8 MB) may take longer than a recording chunk's request.
          requestTimeout: Math.max(timeout, 120_000),
        },
      });
      return { sdk, objects, client: this.client };
    });
    return this.connection;
  }

  /** The prefix the files of one export are written under (the writer names the file by its range). */
  exportPrefix(teamId: number, id: string): string {
    return `${this.prefix}${teamId}/${id}`;
  }

  /** The store as the object-files writer uploads to it, its requests aborted with `signal`. */
  async writerStore(signal: AbortSignal): Promise<ObjectStore> {
    const { sdk, objects, client: s3 } = await this.s3();
    const bucket = this.bucket;
    return {
      where: `s3://${bucket}`,
      open: async () => undefined,
      upload: (key: string): ObjectSink => new objects.ObjectUpload(s3, bucket, key, {}, signal),
      put: async (key, body, contentType) => {
        await s3.send(
          new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }),
          {
            abortSignal: signal,
          },
        );
      },
      // Transient failures (refused, reset or timed-out connections, 5xx, 429) are retryable: the worker tries again.
      classify: (err) => objects.classifyS3Error(err, `writing to s3://${bucket}`),
      // The client is the service's: it outlives one export.
      destroy: () => undefined,
    };
  }

  /** A URL that downloads the object (as `filename`) without credentials for FILE_EXPORT_URL_TTL_SECONDS. */
  async presignedUrl(key: string, filename: string, now: Date): Promise<string> {
    const credentials = await (await this.s3()).client.config.credentials();
    const encodedKey = key.split('/').map(encodeURIComponent).join('/');
    const url = this.endpoint
      ? new URL(`${this.endpoint.replace(/\/+$/, '')}/${this.bucket}/${encodedKey}`)
      : new URL(`https://${this.bucket}.s3.${this.region}.amazonaws.com/${encodedKey}`);
    return presignGetUrl({
      url,
      region: this.region,
      credentials,
      expiresSeconds: this.config.get('FILE_EXPORT_URL_TTL_SECONDS'),
      now,
      query: { 'response-content-disposition': `attachment; filename="${filename}"` },
    });
  }

  /** Removes objects (a missing one is no error): expired and cancelled exports' files. */
  async remove(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const { sdk, client } = await this.s3();
      await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
  }

  onModuleDestroy(): void {
    this.client?.destroy();
  }
}
