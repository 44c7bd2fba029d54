import type { DestinationType } from '../../destinations.js';
import { nonRetryable } from '../export-errors.js';
import type { DeliveryContext, DestinationWriter } from './destination.js';
import { HttpWriter } from './http.js';
import { NoOpWriter } from './noop.js';
import { PostgresWriter } from './postgres.js';

/** The destinations this service delivers to; the others are accepted as configs but their runs fail. */
export const DELIVERED_DESTINATIONS: readonly DestinationType[] = [
  'S3',
  'AwsS3',
  'S3Compatible',
  'AzureBlob',
  'Postgres',
  'Redshift',
  'HTTP',
  'NoOp',
];

/**
 * The writer of a run's destination, or an error ending the run when this service does not deliver there. The
 * Azure and AWS SDKs (about 10 and 4 MB of heap once loaded) are imported by the first run that delivers to Azure
 * or S3, not at start: every process of the service would otherwise carry them, and its garbage collector mark
 * them, for nothing.
 */
export async function createWriter(ctx: DeliveryContext): Promise<DestinationWriter> {
  switch (ctx.type) {
    case 'Postgres':
    case 'Redshift':
      return new PostgresWriter(ctx);
    case 'S3':
    case 'AwsS3':
    case 'S3Compatible': {
      const { S3Writer } = await import('./s3.js');
      return new S3Writer(ctx);
    }
    case 'AzureBlob': {
      const { AzureBlobWriter } = await import('./azure-blob.js');
      return new AzureBlobWriter(ctx);
    }
    case 'HTTP':
      return new HttpWriter(ctx);
    case 'NoOp':
      return new NoOpWriter();
    default:
      throw nonRetryable(
        `This service does not deliver batch exports to ${ctx.type} yet, so nothing was exported. ` +
          `It delivers to ${DELIVERED_DESTINATIONS.join(', ')}.`,
      );
  }
}
