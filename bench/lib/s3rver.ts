/**
 * s3rver (an S3-protocol server) on loopback, as the bench and the e2e tests start it: its files in a temporary
 * directory, its PUTs answered once written whole (`answerPutsWhenWritten`).
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import S3rver from 's3rver';

/** The part of s3rver's filesystem store `answerPutsWhenWritten` wraps. */
interface S3rverStore {
  putObject(object: { bucket: string; key: string }): Promise<{ size: number; md5: string }>;
  getResourcePath(bucket: string, key: string, resource: string): string;
}

/**
 * s3rver 3.7 answers a PUT before its file is written whole: its store's putObject resolves when the request body
 * has been read, while the file is still being written, so a GET right after can read part of it (a read-back
 * check then finds other bytes than were sent). The store of `server` here answers once the file holds every byte,
 * as S3 does.
 */
export function answerPutsWhenWritten(server: S3rver): void {
  const store = (server as unknown as { store: S3rverStore }).store;
  const putObject = store.putObject.bind(store);
  store.putObject = async (object) => {
    const written = await putObject(object);
    const path = store.getResourcePath(object.bucket, object.key, 'object');
    // A file gone meanwhile (the key deleted during its own PUT) has nothing left to wait for.
    const size = () =>
      stat(path).then(
        (s) => s.size,
        () => Infinity,
      );
    for (const deadline = Date.now() + 10_000; (await size()) < written.size;) {
      if (Date.now() > deadline) throw new Error(`s3rver: ${object.key} not written whole after 10 s`);
      await sleep(2);
    }
    return written;
  };
}

/** s3rver on a free loopback port with the named buckets, its files in a temporary directory `<prefix>…`. */
export async function startS3rver(
  buckets: readonly string[],
  prefix = 's3rver-',
): Promise<{ endpoint: string; close(): Promise<void> }> {
  const directory = await mkdtemp(join(tmpdir(), prefix));
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  answerPutsWhenWritten(server);
  const { port } = (await server.run()) as unknown as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
