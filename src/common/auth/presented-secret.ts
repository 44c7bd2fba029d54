import { sha256Hex } from '../crypto/tokens.js';

/**
 * A bearer secret as the guard received it, with its SHA-256 digest (hex) computed on first use and kept: the
 * key lookup finds a key by that digest and the failure throttle remembers a valid key by the same one, so a
 * request hashes its secret at most once (and not at all when nothing needs the digest: a secret of the wrong
 * shape, while the throttle remembers no key).
 */
export class PresentedSecret {
  private hex: string | undefined;

  constructor(readonly value: string) {}

  /** `sha256Hex(value)`. */
  get digest(): string {
    return (this.hex ??= sha256Hex(this.value));
  }
}
