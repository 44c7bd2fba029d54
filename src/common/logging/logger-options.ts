import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../../config/config.js';
import { withBatchedStdout } from './log-destination.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * JSON logs with a request id (the caller's `X-Request-Id` when well-formed — at most 128 characters of
 * letters, digits and `._:-` — else a new uuid, echoed in the response). Every line logged while handling a
 * request carries it (`reqId`, and `req.id` on the request line). Credentials are redacted wherever they could
 * appear. Lines go to standard output in batches (`withBatchedStdout`).
 */
export function loggerOptions(config: AppConfig): Params {
  return withBatchedStdout({
    pinoHttp: {
      level: config.get('LOG_LEVEL'),
      genReqId: (req: IncomingMessage, res: ServerResponse) => {
        const incoming = req.headers['x-request-id'];
        const id = typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-api-key"]',
          'res.headers["set-cookie"]',
          '*.secret',
          '*.password',
          '*.token',
          '*.api_key',
          '*.personal_api_key',
        ],
        censor: '[redacted]',
      },
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        // `ip` is the client address as Express sees it: X-Forwarded-For counts only when TRUST_PROXY says so.
        req: (req: {
          id: string;
          method: string;
          url: string;
          headers: Record<string, unknown>;
          remoteAddress?: string;
          raw?: { ip?: string };
        }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
          ip: req.raw?.ip ?? req.remoteAddress,
          headers: req.headers,
        }),
      },
      quietReqLogger: true,
    },
  });
}
