import type { Params } from 'nestjs-pino';
import pino from 'pino';
import type { Options } from 'pino-http';

/** A write is made once this many bytes of log lines are waiting… */
export const LOG_BATCH_BYTES = 4096;
/** …or this long after a line was logged, whichever comes first. */
export const LOG_FLUSH_MS = 100;

let destination: pino.DestinationStream | undefined;

/**
 * Standard output for the JSON logs, written in batches. With one request log line per request, writing each
 * line on its own costs a system call per request (and, for pino's default asynchronous stream, a hand-off to
 * libuv's thread pool and back); batching makes that one write per ~10 requests under load. A line waits at
 * most LOG_FLUSH_MS, and whatever is buffered is written synchronously when the process exits (also after
 * `process.exit()` or an uncaught exception). Only a SIGKILL can lose the last LOG_FLUSH_MS of lines.
 *
 * One stream per process, shared by every logger: the flush timer and the exit hook are set up once.
 */
export function batchedStdout(): pino.DestinationStream {
  if (destination) return destination;
  // Synchronous writes keep the flush exact: when flush() returns, the buffer is on its way to the kernel.
  const stream = pino.destination({ dest: 1, sync: true, minLength: LOG_BATCH_BYTES });
  let pending = false;
  setInterval(() => {
    if (!pending) return;
    pending = false;
    stream.flush();
  }, LOG_FLUSH_MS).unref();
  process.once('exit', () => {
    if (pending) stream.flushSync();
  });
  destination = {
    write(line: string) {
      pending = true;
      stream.write(line);
    },
  };
  return destination;
}

/** The logger params with their lines sent to `batchedStdout` (nothing is set up for the `silent` level). */
export function withBatchedStdout(params: { pinoHttp: Options }): Params {
  const options = params.pinoHttp;
  return { ...params, pinoHttp: options.level === 'silent' ? options : [options, batchedStdout()] };
}
