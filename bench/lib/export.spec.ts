import { describe, expect, it } from '@jest/globals';
import {
  type ExportResult,
  formatExportTable,
  MIN_EVENTS_EXPORT_RATIO,
  MIN_EXPORT_RATIO,
  minExportRatio,
} from './export.js';

const result = (model: ExportResult['model'], ratio: number): ExportResult => ({
  model,
  rows: 1_000_000,
  service: { seconds: 53.05, rowsPerSec: 18851, bytes: 456_909_505 },
  baseline: { seconds: 44.45, rowsPerSec: 22499 },
  ratio,
  worker: { rssIdleMb: 172, rssMaxMb: 244, cpuMs: 4990 },
  destinationRowsChecked: 1_000_000,
});

describe('export scenarios', () => {
  it('holds the events export to 0.6× the COPY and the persons export to 0.5×', () => {
    expect(minExportRatio('events')).toBe(MIN_EVENTS_EXPORT_RATIO);
    expect(MIN_EVENTS_EXPORT_RATIO).toBe(0.6);
    expect(minExportRatio('persons')).toBe(MIN_EXPORT_RATIO);
    expect(MIN_EXPORT_RATIO).toBe(0.5);
  });

  it('names the model, both rates, the ratio against its own target and the worker memory', () => {
    const text = formatExportTable(result('events', 0.838));
    expect(text).toContain('export (events → Postgres)');
    expect(text).toMatch(/service \(batch export run\) \| 1000000 \| 53\.05 +\| 18851/);
    expect(text).toMatch(/baseline \(plain COPY\) +\| 1000000 \| 44\.45 +\| 22499/);
    expect(text).toContain('Ratio (service rows/s ÷ COPY rows/s): 0.838 (target ≥ 0.6).');
    expect(text).toContain('Worker RSS: 172 MB idle, 244 MB max during the run; 4990 ms of worker CPU.');
    expect(formatExportTable(result('persons', 0.682))).toContain('0.682 (target ≥ 0.5)');
  });
});
