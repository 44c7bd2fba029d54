import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { openSealed, type StoredRecording, storedDifference } from './stored-recording.js';

const stored = (): StoredRecording => ({
  recording: {
    event_count: 3,
    click_count: 1,
    start_url: 'https://shop.example.com/',
    snapshot_bytes: '120',
  },
  eventKeys: 2,
  chunks: [
    {
      windowId: 'w',
      firstTimestamp: '2026-11-21T08:00:00.000Z',
      lastTimestamp: '2026-11-21T08:00:01.000Z',
      eventCount: 3,
      storedIn: 'object',
      lines: '["w",{"type":4}]\n["w",{"type":2}]\n',
    },
  ],
});

describe('storedDifference', () => {
  it('finds none when both sides stored the same', () => {
    expect(storedDifference(stored(), stored())).toBeNull();
  });

  it('names the recording field, key count or chunk that differs', () => {
    const fewer = stored();
    fewer.recording.event_count = 2;
    expect(storedDifference(stored(), fewer)).toBe('recording.event_count: service 3, baseline 2');
    const keys = stored();
    keys.eventKeys = 3;
    expect(storedDifference(stored(), keys)).toBe('event keys: service 2, baseline 3');
    const inRow = stored();
    inRow.chunks[0].storedIn = 'data';
    expect(storedDifference(stored(), inRow)).toBe('chunk 0 storedIn: service object, baseline data');
    const lines = stored();
    lines.chunks[0].lines = '["w",{"type":4}]\n["w",{"type":3}]\n';
    expect(storedDifference(stored(), lines)).toMatch(/^chunk 0 lines differ at character 30/);
    const none = stored();
    none.chunks = [];
    expect(storedDifference(stored(), none)).toBe('chunks: service 1, baseline 0');
  });
});

describe('openSealed', () => {
  it('opens the service format (nonce ‖ ciphertext ‖ tag, associated data) and refuses anything else', () => {
    const key = randomBytes(32);
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from('1/s/7'));
    const sealed = Buffer.concat([nonce, cipher.update('gzip bytes'), cipher.final(), cipher.getAuthTag()]);
    expect(openSealed(key, sealed, '1/s/7').toString()).toBe('gzip bytes');
    expect(() => openSealed(key, sealed, '1/s/8')).toThrow();
    expect(() => openSealed(randomBytes(32), sealed, '1/s/7')).toThrow();
  });
});
