import { getServers } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/config.js';

/** What a TXT lookup found. */
export type TxtLookup =
  /** The name has TXT records: each record's character strings joined into one string. */
  | { outcome: 'found'; records: string[] }
  /** The name does not exist (NXDOMAIN) or has no TXT record (NODATA). */
  | { outcome: 'absent'; code: string }
  /** No answer: timeout, refused, server failure, unreachable servers… */
  | { outcome: 'failed'; code: string; message: string };

const ABSENT_CODES = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * Looks up TXT records with a real resolver (Node's c-ares `dns.promises.Resolver`): the servers of
 * DNS_SERVERS, else the system's. One lookup never takes longer than DNS_TIMEOUT_MS: each server gets an equal
 * share of it for its one try, and whatever is still pending at the deadline is cancelled. Never throws.
 */
@Injectable()
export class TxtResolver {
  private readonly servers: string[] | null;
  private readonly timeoutMs: number;

  constructor(config: AppConfig) {
    this.servers = config.get('DNS_SERVERS');
    this.timeoutMs = config.get('DNS_TIMEOUT_MS');
  }

  async lookup(name: string): Promise<TxtLookup> {
    const serverCount = Math.max(1, (this.servers ?? getServers()).length);
    const resolver = new Resolver({
      timeout: Math.max(50, Math.floor(this.timeoutMs / serverCount)),
      tries: 1,
    });
    let deadline: NodeJS.Timeout | undefined;
    try {
      if (this.servers) resolver.setServers(this.servers);
      deadline = setTimeout(() => resolver.cancel(), this.timeoutMs);
      const records = await resolver.resolveTxt(name);
      return { outcome: 'found', records: records.map((chunks) => chunks.join('')) };
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const code = e.code ?? 'UNKNOWN';
      if (ABSENT_CODES.has(code)) return { outcome: 'absent', code };
      // A cancelled query is one that outlived DNS_TIMEOUT_MS.
      if (code === 'ECANCELLED') return { outcome: 'failed', code: 'ETIMEOUT', message: 'deadline exceeded' };
      return { outcome: 'failed', code, message: e.message };
    } finally {
      clearTimeout(deadline);
    }
  }
}
