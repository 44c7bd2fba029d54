import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Clock } from '../common/time/clock.js';
import { ScimRepository } from './scim.repository.js';

/** Most characters of a body (request or response) a log entry keeps; the rest is cut, marked. */
export const SCIM_LOG_BODY_MAX = 16 * 1024;

// Bounded repetitions: linear on any text (an unbounded local part backtracks quadratically on long runs).
const EMAIL = /[A-Za-z0-9._%+'-]{1,64}@([A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8})/g;

/** Replaces the local part of every e-mail address with `***` (the domain stays: it says which IdP tenant). */
export function maskEmails(text: string): string {
  return text.replace(EMAIL, '***@$1');
}

/** A body as logged: masked, cut to SCIM_LOG_BODY_MAX characters. */
export function logBody(text: string | null): string | null {
  if (text === null || text === '') return null;
  const masked = maskEmails(text);
  return masked.length > SCIM_LOG_BODY_MAX
    ? `${masked.slice(0, SCIM_LOG_BODY_MAX)}…[truncated ${masked.length - SCIM_LOG_BODY_MAX} characters]`
    : masked;
}

/** Request headers as logged: the credential and cookies masked, addresses masked, each value at most 1 KB. */
export function logHeaders(headers: Request['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers).slice(0, 50)) {
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (name === 'authorization') out[name] = value.replace(/^(\s*\w+\s+).*$/s, '$1***') || '***';
    else if (name === 'cookie' || name === 'proxy-authorization') out[name] = '***';
    else out[name] = maskEmails(value).slice(0, 1024);
  }
  return out;
}

/** The path as logged: decoded where it can be (a filter's address shows as masked), at most 2048 characters. */
export function logPath(url: string): string {
  let path = url;
  try {
    path = decodeURIComponent(url);
  } catch {
    // Left as sent.
  }
  return maskEmails(path).slice(0, 2048);
}

/**
 * Writes the SCIM request log: once a response to a SCIM request is determined (its status and body known), the
 * entry is inserted before the response is let go, in this process; a failed insert is logged as an error and
 * the response still goes out. So an answered request has its entry, and a failing log never fails a request.
 */
@Injectable()
export class ScimRequestLog {
  private readonly logger = new Logger(ScimRequestLog.name);

  constructor(
    private readonly scim: ScimRepository,
    private readonly clock: Clock,
  ) {}

  /** Starts recording the request to the domain (once per request). */
  record(req: Request, res: Response, domainId: string): void {
    const marked = req as Request & { scimLogged?: boolean };
    if (marked.scimLogged) return;
    marked.scimLogged = true;
    const started = performance.now();
    const at = this.clock.now();
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buffer = Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      // Enough to fill the bounded body; the rest is not kept.
      if (size <= SCIM_LOG_BODY_MAX * 4) chunks.push(buffer);
      size += buffer.length;
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      const requestBody =
        req.body !== undefined && req.body !== null && typeof req.body === 'object'
          ? JSON.stringify(req.body)
          : null;
      this.scim
        .insertLog({
          domainId,
          createdAt: at,
          method: req.method.slice(0, 10),
          path: logPath(req.originalUrl ?? req.url),
          status: res.statusCode,
          durationMs: Math.max(0, Math.round(performance.now() - started)),
          requestHeaders: logHeaders(req.headers),
          requestBody: logBody(requestBody),
          responseBody: logBody(Buffer.concat(chunks).toString('utf8')),
        })
        .catch((err: unknown) =>
          this.logger.error(
            { err, domainId, path: req.path },
            'SCIM request log: the entry could not be written',
          ),
        )
        .finally(() => end(...args));
      return res;
    }) as typeof res.end;
  }
}
