import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { IsObject, IsString } from 'class-validator';
import {
  escapeReservedKeys,
  isReservedKey,
  restoreReservedKeys,
  unescapeReservedKey,
  unescapeReservedKeysIn,
} from './reserved-keys.js';

class Dto {
  @IsString()
  name: string;

  @IsObject()
  config: Record<string, unknown>;
}

describe('reserved keys', () => {
  const parsed = () =>
    JSON.parse(
      '{"name": "x", "config": {"__proto__": {"polluted": true}, "constructor": "c", "toString": "t", "plain": [{"valueOf": 1}]}}',
    ) as Record<string, unknown>;

  it('names the members of Object.prototype', () => {
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(isReservedKey(key)).toBe(true);
    }
    expect(isReservedKey('name')).toBe(false);
  });

  it('survive a class-transformer round trip as own plain keys', () => {
    const dto = restoreReservedKeys(plainToInstance(Dto, escapeReservedKeys(parsed())));
    expect(dto).toBeInstanceOf(Dto);
    expect(Object.keys(dto.config)).toEqual(['__proto__', 'constructor', 'toString', 'plain']);
    expect(Object.getPrototypeOf(dto.config)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(dto.config, '__proto__')?.value).toEqual({ polluted: true });
    expect(dto.config.constructor).toBe('c');
    expect((dto.config.plain as Record<string, unknown>[])[0].valueOf).toBe(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(dto.config))).toEqual(
      JSON.parse(
        '{"plain": [{"valueOf": 1}], "__proto__": {"polluted": true}, "constructor": "c", "toString": "t"}',
      ),
    );
  });

  it('leaves input without them untouched (same objects)', () => {
    const body = { a: { b: [1, { c: 'd' }] } };
    expect(escapeReservedKeys(body)).toBe(body);
  });

  it('unescapes keys and texts', () => {
    expect(unescapeReservedKey('\u0000constructor')).toBe('constructor');
    expect(unescapeReservedKey('\u0000other')).toBe('\u0000other');
    expect(unescapeReservedKeysIn("Unknown field 'a__\u0000__proto__'.")).toBe(
      "Unknown field 'a____proto__'.",
    );
  });
});
