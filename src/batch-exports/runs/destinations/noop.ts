import type { ExportRow } from '../export-models.js';
import type { DestinationWriter } from './destination.js';

/** NoOp: reads and counts the records, writes nothing (0 bytes delivered). */
export class NoOpWriter implements DestinationWriter {
  async open(): Promise<void> {}
  async write(_rows: readonly ExportRow[]): Promise<void> {}
  async finish(): Promise<{ bytes: number }> {
    return { bytes: 0 };
  }
  async close(): Promise<void> {}
}
