import type { INestApplication, NestApplicationOptions } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { rawBody } from './capture/raw-body.middleware.js';
import { requireJsonBody } from './common/http/require-json.middleware.js';
import { AppConfig } from './config/config.js';
import { setupSwagger } from './swagger.js';

/** Options for NestFactory.create / createNestApplication: the body parser is installed by configureApp. */
export const APP_OPTIONS: NestApplicationOptions = { bufferLogs: true, bodyParser: false };

/**
 * Everything about the HTTP application that is not a module: shared by main.ts, the e2e tests and the
 * OpenAPI export, so all three run the same app.
 */
export function configureApp(app: INestApplication): NestExpressApplication {
  const express = app as NestExpressApplication;
  const config = app.get(AppConfig);
  express.useLogger(app.get(Logger));
  express.set('trust proxy', config.get('TRUST_PROXY'));
  express.disable('x-powered-by');
  // No ETag: answers are per caller and never revalidated by API clients, and hashing every body (hundreds of KB
  // for a page of batch exports) costs CPU on every request.
  express.disable('etag');
  // Recording capture reads its body raw (gzip, form, base64 or JSON, up to RECORDING_BODY_LIMIT) before the
  // global JSON parser, which then leaves it alone.
  express.use('/s', rawBody(config.get('RECORDING_BODY_LIMIT')));
  // The JSON API refuses other media types (415); routes under other prefixes parse their own bodies.
  express.use('/api', requireJsonBody);
  express.useBodyParser('json', {
    limit: config.get('BODY_LIMIT'),
    type: ['application/json', 'application/*+json'],
  });
  if (config.get('SWAGGER_ENABLED')) setupSwagger(express);
  return express;
}
