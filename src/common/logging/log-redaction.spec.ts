import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { pinoHttp } from 'pino-http';
import { LOG_CENSOR, redactLogValue, withRedactedBindings } from './log-redaction.js';
import type { AppConfig } from '../../config/config.js';
import { baseLoggerOptions, loggerOptions } from './logger-options.js';

/** pino's own redaction with the paths the service used before log-redaction.ts: the reference. */
const PINO_REDACT = {
  paths: [
    'req.headers.authorization',
    'req.headers.cookie',
    'req.headers["x-api-key"]',
    '*.secret',
    '*.password',
    '*.token',
    '*.api_key',
    '*.personal_api_key',
  ],
  censor: LOG_CENSOR,
};

const requestSerializer = (req: { id?: string; method?: string }) => ({ id: req.id, method: req.method });

function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

/** The same calls on a logger with pino's redaction and on one with the service's options. */
function bothLoggers(serializers: Record<string, (value: never) => unknown> = {}) {
  const reference = capture();
  const service = capture();
  const options = baseLoggerOptions('info', serializers);
  const referenceLogger = pino(
    {
      level: 'info',
      timestamp: false,
      base: { pid: 1, hostname: 'h' },
      formatters: { level: (label) => ({ level: label }) },
      serializers: serializers as pino.LoggerOptions['serializers'],
      redact: PINO_REDACT,
    },
    reference.stream,
  );
  const serviceLogger = withRedactedBindings(
    pino({ ...options, timestamp: false, base: { pid: 1, hostname: 'h' } }, service.stream),
    new Set(['err', ...Object.keys(serializers)]),
  );
  return { referenceLogger, serviceLogger, reference: reference.lines, service: service.lines };
}

class WithToJson {
  constructor(private readonly value: string) {}
  toJSON() {
    return { wrapped: this.value };
  }
}

/** Every shape pino's redaction treated in its own way, each logged as the merging object. */
const CASES: [string, Record<string, unknown>][] = [
  ['a credential one level down', { user: { name: 'a', password: 'p', token: 't', api_key: 'k' } }],
  [
    'every censored name',
    { x: { secret: 1, password: 2, token: 3, api_key: 4, personal_api_key: 5, other: 6 } },
  ],
  ['top-level names are not censored', { token: 'phx_top', password: 'top' }],
  ['two levels down is not censored', { a: { b: { secret: 's' } } }],
  ['undefined credentials are written censored', { a: { secret: undefined, b: 1 } }],
  ['inherited credentials are not', { a: Object.create({ secret: 'inherited' }) as object }],
  [
    'non-enumerable ones are not',
    { a: Object.defineProperty({ b: 1 }, 'secret', { value: 's', enumerable: false }) },
  ],
  ['arrays are left alone', { list: [{ secret: 's' }], nested: { list: [{ token: 't' }] } }],
  ['dates', { at: new Date(0), nested: { at: new Date(1000), token: 't' } }],
  ['null, numbers, booleans, strings', { a: null, b: 1.5, c: true, d: 'text "quoted" \\ back', e: -0 }],
  ['a class with toJSON and a credential', { v: Object.assign(new WithToJson('w'), { token: 't' }) }],
  [
    'request headers',
    {
      req: {
        headers: { authorization: 'Bearer phx_x', cookie: 'c', 'x-api-key': 'k', accept: '*/*' },
        url: '/',
      },
      other: { headers: { authorization: 'kept: only req headers are' } },
    },
  ],
  ['request headers that are not an object', { req: { headers: 'text', token: 't' } }],
  ['keys in order after a censored one', { z: { token: 't', a: 1 }, a: 2, m: { password: 'p' } }],
];

describe('log redaction (log-redaction.ts)', () => {
  it.each(CASES)('%s: the line is the one pino wrote with its redaction', (_name, fields) => {
    const { referenceLogger, serviceLogger, reference, service } = bothLoggers();
    referenceLogger.info(fields, 'message');
    serviceLogger.info(fields, 'message');
    expect(service).toEqual(reference);
    expect(service).toHaveLength(1);
  });

  it('the credentials of those cases are redacted, and nothing of the caller changes', () => {
    const fields = {
      user: { password: 'p', name: 'n' },
      req: { headers: { authorization: 'Bearer phx_secret' } },
    };
    const { serviceLogger, service } = bothLoggers();
    serviceLogger.info(fields, 'message');
    const line = JSON.parse(service[0]) as Record<string, Record<string, unknown>>;
    expect(line.user).toEqual({ password: LOG_CENSOR, name: 'n' });
    expect(line.req).toEqual({ headers: { authorization: LOG_CENSOR } });
    expect(fields.user.password).toBe('p');
    expect(fields.req.headers.authorization).toBe('Bearer phx_secret');
  });

  it("a serializer's result is redacted, as pino redacted it, and its input is not touched first", () => {
    const { referenceLogger, serviceLogger, reference, service } = bothLoggers({
      req: requestSerializer as (value: never) => unknown,
    });
    const error = Object.assign(new Error('failed'), { token: 'phx_in_error', code: 'E1' });
    for (const logger of [referenceLogger, serviceLogger]) {
      logger.error({ err: error, req: { id: 'r1', method: 'GET', headers: { authorization: 'x' } } }, 'm');
      logger.error(error, 'thrown');
    }
    expect(service).toEqual(reference);
    const line = JSON.parse(service[0]) as { err: Record<string, unknown>; req: Record<string, unknown> };
    expect(line.err).toMatchObject({ token: LOG_CENSOR, code: 'E1', message: 'failed', type: 'Error' });
    expect(line.req).toEqual({ id: 'r1', method: 'GET' });
  });

  it("a child's bindings, and lines logged through the child, as pino wrote them", () => {
    const { referenceLogger, serviceLogger, reference, service } = bothLoggers();
    for (const logger of [referenceLogger, serviceLogger]) {
      const child = logger.child({ context: 'Ctx', key: { api_key: 'k', id: 1 }, reqId: 'abc' });
      child.info({ a: { secret: 's' } }, 'in the child');
      child.child({ more: { token: 't' } }).warn('grandchild');
      const later = child.child({ n: 1 });
      later.setBindings({ set: { password: 'p' } });
      later.info('after setBindings');
    }
    expect(service).toEqual(reference);
    expect(service[1]).toContain(`"key":{"api_key":"${LOG_CENSOR}","id":1}`);
  });

  it.each([
    ['%o', { a: { secret: 's' }, b: 1 }],
    ['%j', { req: { headers: { cookie: 'c' } } }],
    ['%O', [{ token: 't' }, { other: 1 }]],
  ])('an object interpolated with %s is redacted as pino redacted it', (format, arg) => {
    const { referenceLogger, serviceLogger, reference, service } = bothLoggers();
    for (const logger of [referenceLogger, serviceLogger]) {
      // pino's types take the arguments of a message without a placeholder in its text only.
      const info = logger.info.bind(logger) as (...args: unknown[]) => void;
      info(`value ${format}`, arg);
      info({ ctx: 1 }, `value ${format}`, arg);
    }
    expect(service).toEqual(reference);
    expect(service[0]).toContain(LOG_CENSOR);
  });

  it('the one difference: a lone surrogate in a top-level string is written as pino writes strings', () => {
    const { referenceLogger, serviceLogger, reference, service } = bothLoggers();
    referenceLogger.info({ nested: { text: 'a\ud800b' } }, 'm \ud800');
    serviceLogger.info({ nested: { text: 'a\ud800b' } }, 'm \ud800');
    // Inside an object both escape it; as the message, pino's redaction escaped it and pino alone does not.
    expect(reference[0]).toContain('"text":"a\\ud800b"');
    expect(service[0]).toContain('"text":"a\\ud800b"');
    expect(reference[0]).toContain('"msg":"m \\ud800"');
    expect(service[0]).toContain('"msg":"m \ufffd"');
  });

  it('returns the value itself when nothing is to be redacted (no copy per line)', () => {
    const value = { a: 1, nested: { secret: 's' } };
    expect(redactLogValue('x', value)).toBe(value);
    const req = { headers: { accept: 'a' }, url: '/' };
    expect(redactLogValue('req', req)).toBe(req);
    expect(redactLogValue('x', { token: 't' })).toEqual({ token: LOG_CENSOR });
  });
});

describe("the application's request logger (loggerOptions with pino-http)", () => {
  it("redacts what is logged during a request, its children's bindings, and writes the request line", async () => {
    const out = capture();
    const config = { get: (key: string) => (key === 'LOG_LEVEL' ? 'info' : undefined) } as Pick<
      AppConfig,
      'get'
    >;
    const { pinoHttp: options } = loggerOptions(config, out.stream);
    const middleware = pinoHttp(options as Parameters<typeof pinoHttp>[0]);
    const server = createServer((req: IncomingMessage, res: ServerResponse) =>
      middleware(req, res, () => {
        req.log.info({ key: { api_key: 'phx_logged', id: 7 } }, 'inside');
        req.log.child({ bound: { secret: 's', kept: 1 } }).warn('in a child');
        res.end('ok');
      }),
    ).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/api/x?access_token=abc`, {
        headers: { authorization: 'Bearer phx_header', 'x-request-id': 'req-1' },
      });
      expect(await res.text()).toBe('ok');
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    const lines = out.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.msg)).toEqual(['inside', 'in a child', 'request completed']);
    expect(lines[0]).toMatchObject({ reqId: 'req-1', key: { api_key: LOG_CENSOR, id: 7 } });
    expect(lines[1]).toMatchObject({ reqId: 'req-1', bound: { secret: LOG_CENSOR, kept: 1 } });
    expect(lines[2]).toMatchObject({
      level: 'info',
      reqId: 'req-1',
      req: { id: 'req-1', method: 'GET', url: '/api/x?access_token=[redacted]' },
      res: { statusCode: 200 },
    });
    expect(out.lines.join('\n')).not.toMatch(/phx_(logged|header)|"s"/);
  });
});
