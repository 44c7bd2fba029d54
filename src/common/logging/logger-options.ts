import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import pino from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../../config/config.js';
import { batchedStdout, loadPrettyStdout } from './log-destination.js';
import {
  redactedSerializer,
  redactInterpolated,
  redactLogFields,
  withRedactedBindings,
} from './log-redaction.js';
import { redactUrl } from './redact-url.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Nest's own start-up chatter (modules initialised, every route mapped): logged at debug, not info. */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

type Level = AppConfig['values']['LOG_LEVEL'];

let destination: pino.DestinationStream | undefined;

/**
 * Chooses where log lines go, once per process, before anything is logged: standard output as JSON lines
 * (`LOG_FORMAT=json`, batched, see `batchedStdout`) or as human-readable lines (`LOG_FORMAT=pretty`, for
 * development). Until it is called (tests, the CLI) loggers write JSON.
 */
export async function setUpLogging(config: AppConfig): Promise<void> {
  destination = config.get('LOG_FORMAT') === 'pretty' ? await loadPrettyStdout() : batchedStdout();
}

const logDestination = () => (destination ??= batchedStdout());

/**
 * What every logger of the process shares: the level, level names as strings (`"level":"info"`, the one
 * format of every line, boot lines included), credentials redacted wherever they could appear (log-redaction.ts:
 * the logged fields, bindings, `serializers`' results and interpolated objects), and Nest's
 * start-up lines moved down to debug (the boot is quiet unless LOG_LEVEL=debug).
 */
export function baseLoggerOptions(
  level: Level,
  serializers: Record<string, (value: never) => unknown> = {},
): pino.LoggerOptions {
  // Every serializer's result is redacted; the other top-level values are redacted before pino writes them.
  const all = { err: pino.stdSerializers.err, ...serializers } as Record<string, (value: unknown) => unknown>;
  const serialized = serializedKeys(all);
  const redactFields = (fields: Record<string, unknown>) => redactLogFields(fields, serialized);
  return {
    level,
    formatters: { level: (label) => ({ level: label }), log: redactFields, bindings: redactFields },
    serializers: Object.fromEntries(
      Object.entries(all).map(([key, serializer]) => [key, redactedSerializer(key, serializer)]),
    ),
    hooks: {
      logMethod(rawArgs, method, levelValue) {
        const args = redactInterpolated(rawArgs) as typeof rawArgs;
        const first: unknown = args[0];
        if (
          levelValue === 30 &&
          typeof first === 'object' &&
          first !== null &&
          FRAMEWORK_CONTEXTS.has((first as { context?: string }).context ?? '')
        ) {
          (this.debug as (...a: unknown[]) => void)(...args);
          return;
        }
        method.apply(this, args);
      },
    },
  };
}

/** The top-level keys `serializers` (pino's `err` included) write: redacted by their serializers. */
const serializedKeys = (serializers: object): ReadonlySet<string> =>
  new Set(['err', ...Object.keys(serializers)]);

/**
 * A root logger with the service's options (`baseLoggerOptions`), writing to `destination` (pino's default when
 * none), whose children's bindings are redacted too (`withRedactedBindings`).
 */
function rootLogger(
  level: Level,
  serializers: Record<string, (value: never) => unknown>,
  destination?: pino.DestinationStream,
): pino.Logger {
  const options = baseLoggerOptions(level, serializers);
  const logger = destination ? pino(options, destination) : pino(options);
  return withRedactedBindings(logger, serializedKeys(serializers));
}

/** Writes text as it is (the bootstrap key banner) to the log destination at once, in order with the log lines. */
export function writeToLog(text: string): void {
  const out = logDestination() as pino.DestinationStream & { flush?: () => void };
  out.write(text);
  out.flush?.();
}

let boot: pino.Logger | undefined;

/** The logger of the boot and shutdown phases (`context: "Bootstrap"`), before and after the application's. */
export function bootLogger(level: Level = 'info'): pino.Logger {
  boot ??= rootLogger(level, {}, logDestination()).child({ context: 'Bootstrap' });
  return boot;
}

/** Sets the level of the boot logger (main.ts, once the configuration is read). */
export function setBootLogLevel(level: Level): void {
  bootLogger(level).level = level;
}

/** The fields of a request's final line (`req`), as they are when the request arrives. */
interface RequestFields {
  id: string;
  method: string | undefined;
  url: string;
  ip: string | undefined;
}

/** Where a request keeps its `req` fields from its arrival to its final line. */
const REQUEST_FIELDS = Symbol('requestFields');

type LoggedRequest = IncomingMessage & {
  id: string;
  ip?: string;
  originalUrl?: string;
  [REQUEST_FIELDS]?: RequestFields;
};

// `ip` is the client address as Express sees it: X-Forwarded-For counts only when TRUST_PROXY says so.
const requestFields = (req: LoggedRequest): RequestFields => ({
  id: req.id,
  method: req.method,
  // Share tokens in the path or query are credentials: redacted (redact-url.ts).
  url: redactUrl(req.originalUrl ?? req.url),
  ip: req.ip ?? req.socket?.remoteAddress,
});

/**
 * The application's logs (nestjs-pino): one line per request when its answer is finished — `req` (id, method,
 * url, client address), `res` (status code) and `responseTime` in ms; no headers — at `info` for every status
 * below 500 (a 4xx is the client's business) and `error` for a 5xx or a failed response. Every line logged
 * while handling a request carries its id (`reqId`): the caller's `X-Request-Id` when well-formed — at most 128
 * characters of letters, digits and `._:-` — else a new uuid, echoed in the response.
 *
 * One child logger per request: pino-http binds the request to a child under its `req` attribute key, here
 * `reqId`, whose serializer writes the request's id, so the lines logged during the request carry `reqId`
 * alone; the final line adds `req` (read when the request arrived, as a binding would have been) before `res`
 * and `responseTime`. The lines are those of pino-http's `quietReqLogger` (a `reqId` child, and a `req` child
 * of it for the final line), field for field and in the same order, with one child instead of two.
 */
export function loggerOptions(
  config: Pick<AppConfig, 'get'>,
  destination: pino.DestinationStream | undefined = config.get('LOG_LEVEL') === 'silent'
    ? undefined
    : logDestination(),
): Params {
  const level = config.get('LOG_LEVEL');
  const serializers = {
    reqId: (req: LoggedRequest | string) => (typeof req === 'string' ? req : req.id),
    req: (req: LoggedRequest) => req[REQUEST_FIELDS] ?? requestFields(req),
    res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
  };
  const options: Options = {
    // pino-http's logger is a child of this one (with the options below), and the request's loggers its children.
    logger: rootLogger(level, serializers, destination),
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      const logged = req as LoggedRequest;
      logged.id = id;
      logged[REQUEST_FIELDS] = requestFields(logged);
      return id;
    },
    customAttributeKeys: { req: 'reqId' },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, _res, fields: object) => ({ req, ...fields }),
    customErrorObject: (req, _res, _err, fields: object) => ({ req, ...fields }),
    // The serializers get the raw request and response: no copy of every header per request.
    wrapSerializers: false,
  };
  return { pinoHttp: options };
}
