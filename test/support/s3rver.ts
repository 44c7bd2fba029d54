/** s3rver for the e2e tests: its credentials in the environment, and a server with its client. */
import type { S3Client } from '@aws-sdk/client-s3';
import { s3rverClient, startS3Server } from './batch-export-runs.js';

/** s3rver's fixed credentials as environment variables (what the service's S3 clients read), for child processes. */
export const S3RVER_ENV: Readonly<Record<string, string>> = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_REGION: 'us-east-1',
};

/** Sets S3RVER_ENV in this process's environment; returns the undo (what was there put back, unset keys deleted). */
export function setS3rverEnv(): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(S3RVER_ENV)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}

/** An s3rver started by `startS3rver`. */
export interface RunningS3rver {
  endpoint: string;
  /** A client of the server (path-style, s3rver's credentials). */
  client: S3Client;
  /** Destroys the client, stops the server and puts the environment back. */
  close(): Promise<void>;
}

/**
 * Sets S3RVER_ENV, then starts s3rver on loopback with the given buckets. If the server fails to start, the
 * environment is put back before the error is thrown. It registers no hooks: the caller closes it in its own
 * `afterAll`, after closing the app that uses it.
 */
export async function startS3rver(buckets: string[]): Promise<RunningS3rver> {
  const restoreEnv = setS3rverEnv();
  let server: Awaited<ReturnType<typeof startS3Server>>;
  try {
    server = await startS3Server(buckets);
  } catch (err) {
    restoreEnv();
    throw err;
  }
  const client = s3rverClient(server.endpoint);
  return {
    endpoint: server.endpoint,
    client,
    close: async () => {
      client.destroy();
      try {
        await server.close();
      } finally {
        restoreEnv();
      }
    },
  };
}
