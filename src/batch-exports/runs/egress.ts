import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { nonRetryable, retryable } from './export-errors.js';

/**
 * Addresses a batch export may not deliver to unless BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: loopback,
 * private networks, link-local (which holds the cloud metadata endpoints 169.254.169.254 and fd00:ec2::254),
 * carrier-grade NAT, "this network", multicast and reserved ranges, and their IPv4-mapped IPv6 forms.
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
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['100::', 64],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** Whether `address` (an IP) is one a batch export may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return BLOCKED.check(mapped[1], 'ipv4');
  return BLOCKED.check(address, 'ipv6');
}

function refused(host: string, address: string) {
  return nonRetryable(
    `The destination host ${host} resolves to ${address}, a loopback, private, link-local or metadata address; ` +
      'batch exports are not delivered there (BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS).',
  );
}

/**
 * Where a batch export may connect. Hosts are resolved and checked at connection time, and the connection is
 * made to the checked address (so a name cannot resolve to a public address for the check and a private one
 * for the connection).
 */
export class EgressPolicy {
  constructor(readonly allowPrivate: boolean) {}

  /** Resolves `host` to the address to connect to, refusing private ones unless allowed. */
  async resolve(host: string): Promise<string> {
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
    ).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOTFOUND' || err.code === 'ENODATA') {
        throw nonRetryable(`The destination host ${host} does not resolve.`);
      }
      throw retryable(`The destination host ${host} could not be resolved (${err.code ?? err.message}).`);
    });
    return this.pick(host, addresses).address;
  }

  private pick(host: string, addresses: LookupAddress[]): LookupAddress {
    if (!addresses.length) throw nonRetryable(`The destination host ${host} does not resolve.`);
    if (!this.allowPrivate) {
      const bad = addresses.find((a) => isPrivateAddress(a.address));
      if (bad) throw refused(host, bad.address);
    }
    return addresses[0];
  }

  /** A `lookup` for http(s) agents and sockets applying the same rule to every connection they open. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, found) => {
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
