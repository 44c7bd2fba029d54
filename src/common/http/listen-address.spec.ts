import { describe, expect, it } from '@jest/globals';
import { listeningMessage, localUrl } from './listen-address.js';

describe('listeningMessage', () => {
  it('names a loopback address as the URL to open', () => {
    expect(listeningMessage({ address: '127.0.0.1', family: 'IPv4', port: 3107 })).toBe(
      'listening on http://127.0.0.1:3107 (Swagger UI at http://127.0.0.1:3107/docs)',
    );
    expect(listeningMessage({ address: '::1', family: 'IPv6', port: 80 })).toBe(
      'listening on http://[::1]:80 (Swagger UI at http://[::1]:80/docs)',
    );
  });

  it('says a wildcard address listens on every interface, and how to reach it from this machine', () => {
    expect(listeningMessage({ address: '0.0.0.0', family: 'IPv4', port: 3000 })).toBe(
      'listening on 0.0.0.0:3000, every IPv4 interface (on this machine: http://localhost:3000, Swagger UI at /docs)',
    );
    expect(listeningMessage({ address: '::', family: 'IPv6', port: 3000 })).toBe(
      'listening on [::]:3000, every interface (on this machine: http://localhost:3000, Swagger UI at /docs)',
    );
  });

  it('passes a socket path through', () => {
    expect(listeningMessage('/tmp/app.sock')).toBe('listening on /tmp/app.sock');
  });
});

describe('localUrl', () => {
  it('is the bound host, or localhost for a wildcard', () => {
    expect(localUrl('127.0.0.1', 3000)).toBe('http://127.0.0.1:3000');
    expect(localUrl('0.0.0.0', 3000)).toBe('http://localhost:3000');
    expect(localUrl('192.168.1.5', 8080)).toBe('http://192.168.1.5:8080');
  });
});
