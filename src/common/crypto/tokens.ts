import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `bytes` random bytes as base62, left-padded to the length that can hold any value of that many bytes. */
export function randomBase62(bytes = 32): string {
  const width = Math.ceil((bytes * 8) / Math.log2(62));
  let n = BigInt(`0x${randomBytes(bytes).toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(width, '0');
}

/** A prefixed secret such as `phx_` + 43 base62 characters (32 random bytes). */
export function generateToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBase62(bytes)}`;
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** A URL-safe random string of at least `length` characters. */
export function randomUrlSafe(length: number): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString('base64url')
    .slice(0, length);
}
