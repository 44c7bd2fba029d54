import type { AddressInfo } from 'node:net';

/** Whether `host` is a wildcard address (every interface). */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '' || host === '[::]';
}

/** `host:port` as a URL authority (an IPv6 address in brackets). */
function authority(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The address to open in a browser on this machine: the bound one, or `localhost` when the server listens on
 * every interface.
 */
export function localUrl(host: string, port: number): string {
  return `http://${authority(isWildcardHost(host) ? 'localhost' : host, port)}`;
}

/**
 * The start-up line, naming the address the server actually bound (from `server.address()`, so a port of 0
 * or a host name shows what it became).
 */
export function listeningMessage(address: AddressInfo | string | null): string {
  if (address === null) return 'listening (address unknown)';
  if (typeof address === 'string') return `listening on ${address}`;
  const { address: host, port } = address;
  if (isWildcardHost(host)) {
    const which = host === '0.0.0.0' ? 'every IPv4 interface' : 'every interface';
    return `listening on ${authority(host, port)}, ${which} (on this machine: ${localUrl(host, port)}, Swagger UI at /docs)`;
  }
  return `listening on ${localUrl(host, port)} (Swagger UI at ${localUrl(host, port)}/docs)`;
}
