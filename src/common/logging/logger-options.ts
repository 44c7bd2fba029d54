import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../../config/config.js';
import { withBatchedStdout } from './log-destination.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * JSON logs with a request id (the caller's `X-Request-Id` when well-formed, else a new uuid, echoed in the
 * response). Credentials are redacted wherever they could appear. Lines go to standard output in batches
 * (`withBatchedStdout`).
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
        req: (req: { id: string; method: string; url: string; headers: Record<string, unknown> }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
          headers: req.headers,
        }),
      },
      quietReqLogger: true,
    },
  });
}
