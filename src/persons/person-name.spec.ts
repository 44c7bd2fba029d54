import { describe, expect, it } from '@jest/globals';
import { personName } from './person-name.js';

describe('personName', () => {
  it('prefers the e-mail', () => {
    expect(personName({ email: 'ada@example.com', name: 'Ada' }, ['d1'])).toBe('ada@example.com');
  });
  it('falls back to the name', () => {
    expect(personName({ name: 'Ada' }, ['d1'])).toBe('Ada');
    expect(personName({ email: '', name: 'Ada' }, ['d1'])).toBe('Ada');
    expect(personName({ email: 42, name: 'Ada' }, ['d1'])).toBe('Ada');
  });
  it('falls back to the first distinct id', () => {
    expect(personName({}, ['first', 'second'])).toBe('first');
    expect(personName({ email: '  ', name: null }, ['first'])).toBe('first');
    expect(personName(null, ['first'])).toBe('first');
  });
  it('is empty without any of them', () => {
    expect(personName({}, [])).toBe('');
  });
});
