import { describe, expect, it } from '@jest/globals';
import { hourOfPartition, partitionName } from './snapshot-storage.repository.js';

describe('chunk buffer partition names', () => {
  it('name the UTC hour, and read back to it', () => {
    const hour = new Date('2026-11-27T20:00:00.000Z');
    expect(partitionName(hour)).toBe('session_recording_chunk_buffer_p2026112720');
    expect(hourOfPartition('session_recording_chunk_buffer_p2026112720')).toEqual(hour);
    expect(partitionName(new Date('2026-01-02T03:00:00.000Z'))).toBe(
      'session_recording_chunk_buffer_p2026010203',
    );
  });

  it('are not read from other names (the default partition, other tables, injected text)', () => {
    expect(hourOfPartition('session_recording_chunk_buffer_default')).toBeNull();
    expect(hourOfPartition('session_recording_snapshots')).toBeNull();
    expect(hourOfPartition('session_recording_chunk_buffer_p2026112720; DROP TABLE x')).toBeNull();
    expect(hourOfPartition('session_recording_chunk_buffer_p20261127201')).toBeNull();
  });
});
