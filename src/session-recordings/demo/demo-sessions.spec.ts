import { describe, expect, it } from '@jest/globals';
import { readCaptureBatch } from '../../ingest/capture-events.js';
import { readSnapshotEvents } from '../ingestion/snapshot-events.js';
import { computeMetadata } from '../ingestion/recording-metadata.js';
import { DEMO_PERSONAS, demoCaptureRequests, demoSessionEvents, prng } from './demo-sessions.js';

describe('demo sessions', () => {
  it('generate sessions with page loads, clicks, input, console messages and idle gaps', () => {
    const events = demoSessionEvents(Date.UTC(2026, 0, 1), prng(42));
    expect(events[0].type).toBe(4);
    expect(events[1].type).toBe(2);
    const meta = computeMetadata(events);
    expect(meta.startUrl?.url).toMatch(/^https:\/\/shop\.example\.com\//);
    expect(meta.mouseActivityCount).toBeGreaterThan(0);
    expect(meta.activeMs).toBeGreaterThan(0);
    // The idle gaps leave inactive time.
    expect(meta.activeMs).toBeLessThan(meta.lastTimestamp - meta.firstTimestamp);
    const times = events.map((e) => e.timestamp);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('is reproducible from a seed', () => {
    expect(demoSessionEvents(0, prng(7))).toEqual(demoSessionEvents(0, prng(7)));
  });

  it('over many sessions produces every kind of activity the metadata counts', () => {
    const events = Array.from({ length: 20 }, (_, i) => demoSessionEvents(i * 1e7, prng(i))).flat();
    const meta = computeMetadata(events);
    expect(meta.clickCount).toBeGreaterThan(0);
    expect(meta.keypressCount).toBeGreaterThan(0);
    expect(meta.consoleLogCount).toBeGreaterThan(0);
    expect(meta.consoleWarnCount).toBeGreaterThan(0);
    expect(meta.consoleErrorCount).toBeGreaterThan(0);
  });

  it('builds capture requests that pass capture validation, one person per persona', async () => {
    const requests = demoCaptureRequests({
      token: 'phc_demo',
      sessions: 6,
      now: Date.UTC(2026, 0, 8),
      seed: 1,
    });
    const batches = (
      await Promise.all(
        requests.map((body) => {
          const batch = readCaptureBatch(body);
          expect(batch.token).toBe('phc_demo');
          return readSnapshotEvents(batch);
        }),
      )
    ).flat();
    expect(new Set(batches.map((b) => b.sessionId)).size).toBe(6);
    expect(new Set(batches.map((b) => b.distinctId))).toEqual(
      new Set(DEMO_PERSONAS.map((p) => p.distinctId)),
    );
    expect(batches.find((b) => b.distinctId === 'demo-ada')?.set).toEqual(DEMO_PERSONAS[0].properties);
  });
});
