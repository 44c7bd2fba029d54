/**
 * Decompression of LZ-string's base64 form (`compressToBase64`), which older posthog-js versions send as
 * `compression=lz64`. The format: LZW codes over UTF-16 code units, written as variable-width bit fields (the
 * width grows as the dictionary does), packed 6 bits per base64 character, most significant bit first. Code 0
 * and 1 introduce a new 8- or 16-bit unit, 2 ends the stream, and any other code is a dictionary entry.
 *
 * Bounded for hostile input: the output is counted as it is produced and the decoding stops past `maxUnits`
 * UTF-16 units (the dictionary holds at most one entry per code read, each at most one unit longer than output
 * already produced, so it is bounded by the same count); a malformed stream is an error, never a partial result.
 */
import { ApiError } from '../common/errors/api-error.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

/** The input is not LZ-string base64 (a character outside the alphabet, a code with no entry, no end mark). */
export class Lz64FormatError extends Error {}

/** The output would be longer than the limit given. */
export class Lz64TooLargeError extends Error {
  constructor(readonly maxUnits: number) {
    super(`LZ-string output longer than ${maxUnits} UTF-16 units`);
  }
}

/** Reads bit fields from the base64 text, 6 bits per character. */
class BitReader {
  private value = 0;
  private mask = 0;
  private index = 0;

  constructor(private readonly text: string) {}

  /** Reads `count` bits, least significant first (LZ-string's order within a field). */
  read(count: number): number {
    let bits = 0;
    for (let power = 0; power < count; power++) {
      if (this.mask === 0) {
        if (this.index >= this.text.length)
          throw new Lz64FormatError('LZ-string data ends before its end mark');
        const code = this.text.charCodeAt(this.index++);
        const value = code < 128 ? VALUES[code] : -1;
        if (value < 0) throw new Lz64FormatError('LZ-string data holds a character outside base64');
        this.value = value;
        this.mask = 32;
      }
      if (this.value & this.mask) bits |= 1 << power;
      this.mask >>= 1;
    }
    return bits;
  }
}

/**
 * The text LZ-string's `compressToBase64` made of `input`; throws `Lz64FormatError` for malformed input and
 * `Lz64TooLargeError` once the output passes `maxUnits` UTF-16 units. White space is ignored and a space stands
 * for `+` (a form value decoded without its `+` escaped).
 */
export function decompressFromBase64(input: string, maxUnits: number): string {
  const text = input.replace(/[\t\n\r]/g, '').replace(/ /g, '+');
  if (text === '') throw new Lz64FormatError('LZ-string data is empty');
  const reader = new BitReader(text);
  // Entries 0-2 stand for the three control codes; the first entry made is 3.
  const dictionary: string[] = ['', '', ''];
  let width = 3;
  let enlargeIn = 4;
  const pieces: string[] = [];
  let produced = 0;
  const emit = (piece: string) => {
    produced += piece.length;
    if (produced > maxUnits) throw new Lz64TooLargeError(maxUnits);
    pieces.push(piece);
  };

  const first = reader.read(2);
  if (first === 2) return '';
  if (first !== 0 && first !== 1) throw new Lz64FormatError('LZ-string data starts with no literal');
  let previous = String.fromCharCode(reader.read(first === 0 ? 8 : 16));
  dictionary.push(previous);
  emit(previous);
  for (;;) {
    let code = reader.read(width);
    if (code === 2) return pieces.join('');
    if (code === 0 || code === 1) {
      dictionary.push(String.fromCharCode(reader.read(code === 0 ? 8 : 16)));
      code = dictionary.length - 1;
      if (--enlargeIn === 0) {
        enlargeIn = 2 ** width;
        width++;
      }
    }
    let entry: string;
    if (code < dictionary.length && code > 2) entry = dictionary[code];
    else if (code === dictionary.length) entry = previous + previous.charAt(0);
    else throw new Lz64FormatError('LZ-string data refers to an entry it has not made');
    emit(entry);
    dictionary.push(previous + entry.charAt(0));
    previous = entry;
    if (--enlargeIn === 0) {
      enlargeIn = 2 ** width;
      width++;
    }
    // A code is at most 16 bits wide before the output limit is reached for any limit in use (the width grows by
    // one bit each time the dictionary doubles); past 30 the shifts above would overflow: malformed input.
    if (width > 30) throw new Lz64FormatError('LZ-string data has too many entries');
  }
}

/**
 * The text of a capture body's LZ-string data (`compression=lz64`), at most `maxBytes` UTF-16 units (UTF-8 is never
 * shorter, so no body within the byte limit is refused): 413 past it, 400 naming `data` when it is not LZ-string.
 */
export function lz64Data(value: string, maxBytes: number): string {
  try {
    return decompressFromBase64(value, maxBytes);
  } catch (error) {
    if (error instanceof Lz64TooLargeError) throw ApiError.payloadTooLarge(maxBytes, true);
    if (!(error instanceof Lz64FormatError)) throw error;
    throw ApiError.validation('The data is not valid LZ-string base64 (compression=lz64).', 'data');
  }
}
