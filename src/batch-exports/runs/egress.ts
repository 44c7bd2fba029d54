import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { EMBEDDED_LISTEN_ADDRESS } from '../../database/embedded-postgres.js';
import { nonRetryable, retryable } from './export-errors.js';

/**
 * Addresses a batch export may not deliver to unless BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS (or, for the
 * embedded database's own address and port, see `EgressPolicy`): loopback,
 * private networks, link-local (which holds the cloud metadata endpoints 169.254.169.254 and fd00:ec2::254),
 * carrier-grade NAT, "this network", multicast and reserved ranges, the documentation ranges (TEST-NET-1, -2
 * and -3, `2001:db8::/32`), deprecated site-local IPv6, Teredo (`2001::/32`: its client address is obfuscated
 * and the tunnel's relay decides where it goes, so it is refused whole), and the IPv6 forms that carry an IPv4
 * address (classified like the address they carry, see `embeddedIpv4`).
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** The 16 bytes of a valid IPv6 address (a zone id, `%eth0`, is ignored; a trailing dotted quad is read). */
export function ipv6Bytes(address: string): Uint8Array {
  let text = address.split('%')[0];
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const groups = (part: string) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const front = groups(head);
  const back = tail === null ? [] : groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[2 * i] = group >> 8;
    bytes[2 * i + 1] = group & 0xff;
  });
  return bytes;
}

const zero = (bytes: Uint8Array, from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
const quadAt = (bytes: Uint8Array, at: number) => Array.from(bytes.subarray(at, at + 4)).join('.');

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach an IPv4 host: IPv4-compatible
 * `::a.b.c.d` (`::/96`, which also holds `::` and `::1`), IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated
 * `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, local-use NAT64 `64:ff9b:1::/48` and 6to4 `2002::/16`.
 * `'unknown'` for a local-use NAT64 address not in the `/96` form: where its IPv4 address sits depends on the
 * prefix length the network chose, so it is refused. Null for any other address.
 */
export function embeddedIpv4(bytes: Uint8Array): string | 'unknown' | null {
  if (
    zero(bytes, 0, 10) &&
    ((bytes[10] === 0 && bytes[11] === 0) || (bytes[10] === 0xff && bytes[11] === 0xff))
  ) {
    return quadAt(bytes, 12);
  }
  if (zero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0) {
    return quadAt(bytes, 12);
  }
  const nat64 = bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b;
  if (nat64 && zero(bytes, 4, 12)) return quadAt(bytes, 12);
  if (nat64 && bytes[4] === 0 && bytes[5] === 1) return zero(bytes, 6, 12) ? quadAt(bytes, 12) : 'unknown';
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return quadAt(bytes, 2);
  return null;
}

/** Whether `address` (an IP) is one a batch export may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  const carried = embeddedIpv4(ipv6Bytes(address));
  if (carried === 'unknown') return true;
  if (carried !== null) return BLOCKED.check(carried, 'ipv4');
  return BLOCKED.check(address.split('%')[0], 'ipv6');
}

/**
 * Whether `address` is the embedded PostgreSQL's own address: `127.0.0.1`, or its IPv4-mapped IPv6 form
 * `::ffff:127.0.0.1` in any spelling (the one IPv6 form the host delivers to its own IPv4 loopback). Not another
 * loopback address (`127.0.0.2`, `::1`: the server does not listen there, another program may) and not the
 * forms that route elsewhere (6to4, NAT64).
 */
export function isEmbeddedDatabaseAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return address === EMBEDDED_LISTEN_ADDRESS;
  if (family !== 6) return false;
  const bytes = ipv6Bytes(address);
  return (
    zero(bytes, 0, 10) &&
    bytes[10] === 0xff &&
    bytes[11] === 0xff &&
    quadAt(bytes, 12) === EMBEDDED_LISTEN_ADDRESS
  );
}

/** Loopback: `127.0.0.0/8`, its IPv4-mapped form `::ffff:127.x.y.z`, or `::1`. */
function isLoopback(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return address.startsWith('127.');
  if (family !== 6) return false;
  const bytes = ipv6Bytes(address);
  if (zero(bytes, 0, 15) && bytes[15] === 1) return true;
  return zero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff && bytes[12] === 127;
}

/** `dns.lookup` with `all: true`: every address of a name. */
export type ResolveAll = (
  host: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

function refused(host: string, address: string, hint = '') {
  return nonRetryable(
    `The destination host ${host} resolves to ${address}, a loopback, private, link-local or metadata address; ` +
      `batch exports are not delivered there (BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS).${hint}`,
  );
}

/**
 * Where a batch export may connect. Hosts are resolved and checked at connection time, and the connection is
 * made to the checked address (so a name cannot resolve to a public address for the check and a private one
 * for the connection).
 *
 * `embeddedDatabasePort`: when the service runs on its embedded PostgreSQL (no DATABASE_URL, a workstation), the
 * port that server listens on at 127.0.0.1. A connection to exactly that address and port (a Postgres or Redshift
 * destination naming it, `resolve(host, port)`) is allowed without BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: it is
 * the service's own local database, which the export reaches only with its password. Every other private address
 * and port stays refused, and so does a connection whose port the policy is not told (HTTP and S3).
 */
export class EgressPolicy {
  constructor(
    readonly allowPrivate: boolean,
    readonly embeddedDatabasePort: number | null = null,
    /** Name resolution (the system's; a test passes its own). */
    private readonly dns: ResolveAll = (host, options, callback) => dnsLookup(host, options, callback),
  ) {}

  /**
   * Resolves `host` to the address to connect to, refusing private ones unless allowed. `port`, when the
   * connection's port is known, lets the embedded database's own address through (see the class).
   */
  async resolve(host: string, port?: number): Promise<string> {
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      this.dns(host, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
    ).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOTFOUND' || err.code === 'ENODATA') {
        throw nonRetryable(`The destination host ${host} does not resolve.`);
      }
      throw retryable(`The destination host ${host} could not be resolved (${err.code ?? err.message}).`);
    });
    return this.pick(host, addresses, port).address;
  }

  private pick(host: string, addresses: LookupAddress[], port?: number): LookupAddress {
    if (!addresses.length) throw nonRetryable(`The destination host ${host} does not resolve.`);
    if (this.allowPrivate) return addresses[0];
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (!bad) return addresses[0];
    const embedded = this.embeddedDatabasePort;
    if (embedded === null || port !== embedded) throw refused(host, bad.address);
    // The embedded database's port: its own address is let through when the name resolves to loopback only
    // (`localhost` also to ::1), and the connection goes to that address. Any other address is refused by name.
    const own = addresses.find((a) => isEmbeddedDatabaseAddress(a.address));
    if (own && addresses.every((a) => isLoopback(a.address))) return own;
    const other = addresses.find((a) => isPrivateAddress(a.address) && !isEmbeddedDatabaseAddress(a.address));
    throw refused(
      host,
      (other ?? bad).address,
      ` The embedded PostgreSQL is reached at ${EMBEDDED_LISTEN_ADDRESS}:${embedded}.`,
    );
  }

  /** A `lookup` for http(s) agents and sockets applying the same rule to every connection they open. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.dns(hostname, { ...options, all: true }, (err, found) => {
      if (err) return callback(err, '', 4);
      let picked: LookupAddress;
      try {
        picked = this.pick(hostname, found);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '', 4);
      }
      if ((options as { all?: boolean }).all) {
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [picked]);
      }
      callback(null, picked.address, picked.family);
    });
  };
}
