import pino from 'pino';
import type { PrettyOptions } from 'pino-pretty';

/** A write is made once this many bytes of log lines are waiting… */
export const LOG_BATCH_BYTES = 4096;
/** …or this long after a line was logged, whichever comes first. */
export const LOG_FLUSH_MS = 100;

let batched: pino.DestinationStream | undefined;
let pretty: pino.DestinationStream | undefined;

/**
 * Standard output for the JSON logs, written in batches. With one request log line per request, writing each
 * line on its own costs a system call per request (and, for pino's default asynchronous stream, a hand-off to
 * libuv's thread pool and back); batching makes that one write per ~10 requests under load. A line waits at
 * most LOG_FLUSH_MS, and whatever is buffered is written synchronously when the process exits (also after
 * `process.exit()` or an uncaught exception). Only a SIGKILL can lose the last LOG_FLUSH_MS of lines.
 *
 * One stream per process, shared by every logger (the boot lines included, so lines never interleave): the
 * flush timer and the exit hook are set up once.
 */
export function batchedStdout(): pino.DestinationStream {
  if (batched) return batched;
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
  batched = {
    write(line: string) {
      pending = true;
      stream.write(line);
    },
    flush() {
      pending = false;
      stream.flush();
    },
  } as pino.DestinationStream;
  return batched;
}

interface LogLine {
  level?: string;
  msg?: string;
  context?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/**
 * Human-readable lines for development (`LOG_FORMAT=pretty`, set by `npm run start:dev`): time, level, context
 * and message, a request as `GET /path 200 3 ms`, other fields below. Needs the `pino-pretty` development
 * dependency (the production image does not ship it). Loaded once, before the first line is logged.
 */
export async function loadPrettyStdout(): Promise<pino.DestinationStream> {
  if (pretty) return pretty;
  let build: (options: PrettyOptions) => pino.DestinationStream;
  try {
    ({ default: build } = (await import('pino-pretty')) as unknown as { default: typeof build });
  } catch {
    throw new Error(
      'LOG_FORMAT=pretty needs the pino-pretty package, a development dependency: run `npm ci` (with dev ' +
        'dependencies) or use LOG_FORMAT=json.',
    );
  }
  const stream = build({
    sync: true,
    colorize: process.stdout.isTTY ?? false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,context,reqId,req,res,responseTime',
    messageFormat: (log: LogLine, messageKey: string) => {
      const context = log.context ? `${log.context}: ` : '';
      if (log.req && log.res) {
        return `${log.req.method} ${log.req.url} ${log.res.statusCode} ${log.responseTime ?? '?'} ms`;
      }
      return `${context}${String((log as Record<string, unknown>)[messageKey] ?? '')}`;
    },
  });
  pretty = stream;
  return stream;
}
