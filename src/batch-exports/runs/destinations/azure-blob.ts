import {
  BlobServiceClient,
  RestError,
  type BlockBlobClient,
  type ContainerClient,
} from '@azure/storage-blob';
import {
  AttemptStopped,
  isTransientNetworkError,
  nonRetryable,
  retryable,
  type ExportError,
} from '../export-errors.js';
import type { DeliveryContext } from './destination.js';
import { ObjectFilesWriter, type ObjectSink, type ObjectStore } from './object-files.js';

/** Blocks are staged once this much is buffered (Azure takes up to 50,000 blocks of up to 4,000 MiB each). */
const BLOCK_SIZE = 8 * 1024 * 1024;

/** The host a connection string sends requests to: its `BlobEndpoint`, or the account's public endpoint. */
export function azureBlobHost(connectionString: string): string {
  const parts = new Map<string, string>();
  for (const part of connectionString.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) parts.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim());
  }
  const endpoint = parts.get('blobendpoint');
  if (endpoint) {
    try {
      return new URL(endpoint).hostname.replace(/^\[|\]$/g, '');
    } catch {
      throw nonRetryable('The Azure connection string has a BlobEndpoint that is not a URL.');
    }
  }
  const account = parts.get('accountname');
  if (!account) throw nonRetryable('The Azure connection string has neither BlobEndpoint nor AccountName.');
  return `${account}.blob.${parts.get('endpointsuffix') ?? 'core.windows.net'}`;
}

function classifyAzureError(err: unknown, where: string): ExportError | AttemptStopped {
  if (err instanceof AttemptStopped) return err;
  if ((err as { name?: string }).name === 'AbortError') return new AttemptStopped('cancelled');
  if ((err as ExportError).retryable !== undefined && err instanceof Error && err.name === 'ExportError') {
    return err as ExportError;
  }
  const message = `${where}: ${(err as Error).message?.split('\n')[0] ?? String(err)}`;
  if (err instanceof RestError && err.statusCode !== undefined) {
    const status = err.statusCode;
    return status === 408 || status === 429 || status >= 500 ? retryable(message) : nonRetryable(message);
  }
  return isTransientNetworkError(err) || /socket|timeout|ECONN|network/i.test(message)
    ? retryable(message)
    : nonRetryable(message);
}

/**
 * One blob being written: buffered, then a single upload, or staged blocks committed at the end once it
 * outgrows a block. Block ids are the block's number, so an attempt that dies before its commit leaves
 * uncommitted blocks that the next attempt's blocks of the same number replace (Azure drops the rest).
 */
class BlobUpload implements ObjectSink {
  private buffers: Buffer[] = [];
  private buffered = 0;
  private readonly blocks: string[] = [];
  bytes = 0;
  private readonly blob: BlockBlobClient;

  constructor(
    container: ContainerClient,
    readonly key: string,
    private readonly signal: AbortSignal,
  ) {
    this.blob = container.getBlockBlobClient(key);
  }

  async write(chunk: Buffer): Promise<void> {
    if (!chunk.length) return;
    this.buffers.push(chunk);
    this.buffered += chunk.length;
    this.bytes += chunk.length;
    if (this.buffered >= BLOCK_SIZE) await this.stage();
  }

  private async stage(): Promise<void> {
    const body = Buffer.concat(this.buffers);
    this.buffers = [];
    this.buffered = 0;
    const id = Buffer.from(`block-${String(this.blocks.length).padStart(6, '0')}`).toString('base64');
    await this.blob.stageBlock(id, body, body.length, { abortSignal: this.signal });
    this.blocks.push(id);
  }

  async end(): Promise<void> {
    if (!this.blocks.length) {
      const body = Buffer.concat(this.buffers);
      this.buffers = [];
      await this.blob.upload(body, body.length, { abortSignal: this.signal });
      return;
    }
    if (this.buffered) await this.stage();
    await this.blob.commitBlockList(this.blocks, { abortSignal: this.signal });
  }

  abort(): Promise<void> {
    // Uncommitted blocks are garbage-collected by Azure (after a week); nothing was made visible.
    this.buffers = [];
    return Promise.resolve();
  }
}

/** An Azure Blob Storage container, through `@azure/storage-blob` and the config's connection string. */
class AzureBlobStore implements ObjectStore {
  private readonly container: ContainerClient;
  readonly where: string;

  constructor(private readonly ctx: DeliveryContext) {
    const c = ctx.config;
    const service = BlobServiceClient.fromConnectionString(c.connection_string as string, {
      retryOptions: { maxTries: 3 },
    });
    this.container = service.getContainerClient(c.container_name as string);
    this.where = `azure://${c.container_name as string}`;
  }

  async open(): Promise<void> {
    await this.ctx.egress.resolve(azureBlobHost(this.ctx.config.connection_string as string));
  }

  upload(key: string): ObjectSink {
    return new BlobUpload(this.container, key, this.ctx.signal);
  }

  async put(key: string, body: string, contentType: string): Promise<void> {
    await this.container.getBlockBlobClient(key).upload(body, Buffer.byteLength(body), {
      abortSignal: this.ctx.signal,
      blobHTTPHeaders: { blobContentType: contentType },
    });
  }

  classify(err: unknown): unknown {
    return classifyAzureError(err, `writing to ${this.where}`);
  }

  destroy(): void {}
}

/**
 * PostHog's `AzureBlob` destination: the run's files in a container, named as the S3 destination names them
 * (ObjectFilesWriter), so a re-run of an interval replaces its blobs.
 */
export class AzureBlobWriter extends ObjectFilesWriter {
  constructor(ctx: DeliveryContext) {
    super(ctx, new AzureBlobStore(ctx));
  }
}
