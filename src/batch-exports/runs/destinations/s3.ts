import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
  type ServerSideEncryption,
} from '@aws-sdk/client-s3';
import {
  AttemptStopped,
  isTransientNetworkError,
  nonRetryable,
  retryable,
  type ExportError,
} from '../export-errors.js';
import type { DeliveryContext } from './destination.js';
import { ObjectFilesWriter, type ObjectSink, type ObjectStore } from './object-files.js';

export { s3Key, s3KeyPrefix } from './object-files.js';

/** S3's smallest part of a multipart upload (but the last): parts are uploaded once this much is buffered. */
const PART_SIZE = 8 * 1024 * 1024;

/** An S3 client's error as an export error: retryable when the store failed transiently. */
export function classifyS3Error(err: unknown, where: string): ExportError | AttemptStopped {
  if (err instanceof AttemptStopped) return err;
  if ((err as { name?: string }).name === 'AbortError') return new AttemptStopped('cancelled');
  if ((err as ExportError).retryable !== undefined && err instanceof Error && err.name === 'ExportError') {
    return err as ExportError;
  }
  if (err instanceof S3ServiceException) {
    const status = err.$metadata?.httpStatusCode ?? 0;
    const message = `${where}: ${err.name}${err.message && err.message !== err.name ? ` (${err.message})` : ''}`;
    if (status === 429 || status >= 500 || err.name === 'SlowDown' || err.name === 'RequestTimeout') {
      return retryable(message);
    }
    return nonRetryable(message);
  }
  // The SDK's retry wraps what is not an Error of its realm (`AWS SDK error wrapper for Error: connect …`).
  const reason = ((err as Error).message ?? String(err)).replace(/^AWS SDK error wrapper for (Error: )?/, '');
  const message = `${where}: ${reason}`;
  const answered = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (isTransientNetworkError(err) || answered === undefined) {
    // Network failures (refused, reset, timed out) reach here without an S3 answer (no HTTP status).
    return isTransientNetworkError(err) || /socket|timeout|ECONN|network/i.test(message)
      ? retryable(message)
      : nonRetryable(message);
  }
  return nonRetryable(message);
}
/**
 * One object being written: buffered, then a single PUT, or a multipart upload once it outgrows a part. The bytes
 * of a part are copied into one buffer of PART_SIZE, allocated once the object outgrows a part and reused for
 * every part of it: a part is never joined from its chunks (one buffer, not a second copy of each part), and the
 * chunks are garbage as soon as they are copied. Parts are sent one at a time (the next is filled after the last
 * was stored), so an upload holds at most one part.
 */
export class ObjectUpload implements ObjectSink {
  /** The chunks of an object smaller than a part so far (a single PUT, unless it outgrows a part). */
  private buffers: Buffer[] = [];
  private buffered = 0;
  /** The part being filled, once the object outgrew a part; `filled` bytes of it hold data. */
  private part: Buffer | null = null;
  private filled = 0;
  private uploadId: string | null = null;
  private parts: { ETag: string; PartNumber: number }[] = [];
  bytes = 0;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    readonly key: string,
    private readonly extra: Extra,
    private readonly signal: AbortSignal,
  ) {}

  async write(chunk: Buffer): Promise<void> {
    if (!chunk.length) return;
    this.bytes += chunk.length;
    if (!this.part) {
      if (this.buffered + chunk.length < PART_SIZE) {
        this.buffers.push(chunk);
        this.buffered += chunk.length;
        return;
      }
      // The object outgrows a part: from here on its bytes go to the part buffer.
      this.part = Buffer.allocUnsafe(PART_SIZE);
      for (const b of this.buffers) {
        b.copy(this.part, this.filled);
        this.filled += b.length;
      }
      this.buffers = [];
      this.buffered = 0;
    }
    for (let at = 0; at < chunk.length;) {
      const n = chunk.copy(this.part, this.filled, at);
      this.filled += n;
      at += n;
      if (this.filled === PART_SIZE) await this.uploadPart();
    }
  }

  /** Sends the part buffer's `filled` bytes as the next part (starting the multipart upload first). */
  private async uploadPart(): Promise<void> {
    if (!this.uploadId) {
      const created = await this.s3.send(
        new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, ...this.extra }),
        { abortSignal: this.signal },
      );
      this.uploadId = created.UploadId!;
    }
    const partNumber = this.parts.length + 1;
    const part = await this.s3.send(
      new UploadPartCommand({
        Bucket: this.bucket,
        Key: this.key,
        UploadId: this.uploadId,
        PartNumber: partNumber,
        Body: this.part!.subarray(0, this.filled),
      }),
      { abortSignal: this.signal },
    );
    // Stored: the buffer is filled again with the next part's bytes.
    this.filled = 0;
    this.parts.push({ ETag: part.ETag!, PartNumber: partNumber });
  }

  async end(): Promise<void> {
    if (!this.part) {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.key,
          Body: Buffer.concat(this.buffers),
          ...this.extra,
        }),
        { abortSignal: this.signal },
      );
      this.buffers = [];
      return;
    }
    if (this.filled || !this.uploadId) await this.uploadPart();
    await this.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: this.key,
        UploadId: this.uploadId!,
        MultipartUpload: { Parts: this.parts },
      }),
      { abortSignal: this.signal },
    );
    this.uploadId = null;
    this.part = null;
  }

  async abort(): Promise<void> {
    this.buffers = [];
    this.part = null;
    if (!this.uploadId) return;
    await this.s3
      .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key, UploadId: this.uploadId }))
      .catch(() => undefined);
    this.uploadId = null;
  }
}

export type Extra = { ServerSideEncryption?: ServerSideEncryption; SSEKMSKeyId?: string };

/** An S3 bucket, on AWS (`AwsS3`) or any S3-compatible store (`S3Compatible`, legacy `S3` with `endpoint_url`). */
class S3Store implements ObjectStore {
  private readonly s3: S3Client;
  private readonly bucket: string;
  private readonly extra: Extra;
  readonly where: string;

  constructor(private readonly ctx: DeliveryContext) {
    const c = ctx.config;
    this.bucket = c.bucket_name as string;
    this.where = `s3://${this.bucket}`;
    this.extra = {
      ...(c.encryption ? { ServerSideEncryption: c.encryption as ServerSideEncryption } : {}),
      ...(c.kms_key_id ? { SSEKMSKeyId: c.kms_key_id as string } : {}),
    };
    const lookup = ctx.egress.lookup;
    this.s3 = new S3Client({
      region: c.region as string,
      endpoint: (c.endpoint_url as string | null | undefined) ?? undefined,
      forcePathStyle: !c.use_virtual_style_addressing && Boolean(c.endpoint_url),
      credentials: {
        accessKeyId: c.aws_access_key_id as string,
        secretAccessKey: c.aws_secret_access_key as string,
      },
      maxAttempts: 3,
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, lookup }),
        httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
        connectionTimeout: 10_000,
        requestTimeout: 120_000,
      },
    });
  }

  async open(): Promise<void> {
    const endpoint = this.ctx.config.endpoint_url as string | null | undefined;
    if (endpoint) await this.ctx.egress.resolve(new URL(endpoint).hostname.replace(/^\[|\]$/g, ''));
  }

  upload(key: string): ObjectSink {
    return new ObjectUpload(this.s3, this.bucket, key, this.extra, this.ctx.signal);
  }

  async put(key: string, body: string, contentType: string): Promise<void> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        ...this.extra,
      }),
      { abortSignal: this.ctx.signal },
    );
  }

  classify(err: unknown): unknown {
    return classifyS3Error(err, `writing to ${this.where}`);
  }

  destroy(): void {
    this.s3.destroy();
  }
}

/** S3 and S3-compatible stores, through the AWS SDK (see ObjectFilesWriter for the files and their keys). */
export class S3Writer extends ObjectFilesWriter {
  constructor(ctx: DeliveryContext) {
    super(ctx, new S3Store(ctx));
  }
}
