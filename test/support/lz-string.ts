/**
 * LZ-string's `compressToBase64`, written from the format's description, for tests only: what older posthog-js
 * versions send as `compression=lz64`. The service only decompresses (src/ingest/lz-string.ts).
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';

export function compressToBase64(input: string): string {
  const out: string[] = [];
  let value = 0;
  let position = 0;
  const write = (bits: number, count: number) => {
    for (let i = 0; i < count; i++) {
      value = (value << 1) | (bits & 1);
      bits >>= 1;
      if (position === 5) {
        out.push(ALPHABET.charAt(value));
        value = 0;
        position = 0;
      } else position++;
    }
  };
  const dictionary = new Map<string, number>();
  const toCreate = new Set<string>();
  let size = 3;
  let width = 2;
  let enlargeIn = 2;
  const grow = () => {
    if (--enlargeIn === 0) {
      enlargeIn = 2 ** width;
      width++;
    }
  };
  const emit = (w: string) => {
    if (toCreate.has(w)) {
      const code = w.charCodeAt(0);
      if (code < 256) {
        write(0, width);
        write(code, 8);
      } else {
        write(1, width);
        write(code, 16);
      }
      grow();
      toCreate.delete(w);
    } else {
      write(dictionary.get(w) as number, width);
    }
    grow();
  };
  let w = '';
  for (const c of input.split('')) {
    if (!dictionary.has(c)) {
      dictionary.set(c, size++);
      toCreate.add(c);
    }
    const wc = w + c;
    if (dictionary.has(wc)) {
      w = wc;
      continue;
    }
    emit(w);
    dictionary.set(wc, size++);
    w = c;
  }
  if (w !== '') emit(w);
  write(2, width);
  // Flush the last character's remaining bits.
  for (;;) {
    value <<= 1;
    if (position === 5) {
      out.push(ALPHABET.charAt(value));
      break;
    }
    position++;
  }
  const text = out.join('');
  return text + '='.repeat((4 - (text.length % 4)) % 4);
}
