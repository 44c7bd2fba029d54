import type { DestinationType } from '../../destinations.js';
import { nonRetryable } from '../export-errors.js';
import type { DeliveryContext, DestinationWriter } from './destination.js';
import { AzureBlobWriter } from './azure-blob.js';
import { HttpWriter } from './http.js';
import { NoOpWriter } from './noop.js';
import { PostgresWriter } from './postgres.js';
import { S3Writer } from './s3.js';

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

/** The writer of a run's destination, or an error ending the run when this service does not deliver there. */
export function createWriter(ctx: DeliveryContext): DestinationWriter {
  switch (ctx.type) {
    case 'Postgres':
    case 'Redshift':
      return new PostgresWriter(ctx);
    case 'S3':
    case 'AwsS3':
    case 'S3Compatible':
      return new S3Writer(ctx);
    case 'AzureBlob':
      return new AzureBlobWriter(ctx);
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
