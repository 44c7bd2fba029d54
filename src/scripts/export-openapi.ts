import { loadServiceFeatures } from '../features.js';
import 'reflect-metadata';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import { AppConfig } from '../config/config.js';
import { buildOpenApiDocument } from '../swagger.js';

/** Object keys sorted at every level (arrays keep their order), so the file is byte-for-byte deterministic. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * Writes openapi/openapi.json from the application's metadata. Runs Nest in preview mode: no provider is
 * instantiated and no database is needed. `--check` fails (exit 1) when the committed file differs.
 */
async function main(): Promise<void> {
  const target = fileURLToPath(new URL('../../openapi/openapi.json', import.meta.url));
  const config = AppConfig.fromEnv({
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    LOG_LEVEL: 'silent',
  });
  const app = await NestFactory.create(AppModule.forRoot(config, await loadServiceFeatures()), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  const text = `${JSON.stringify(sortKeys(buildOpenApiDocument(app)), null, 2)}\n`;
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // missing file: drift
    }
    if (current !== text) {
      process.stderr.write(
        'openapi/openapi.json is out of date: run `npm run build && npm run openapi` and commit it\n',
      );
      process.exit(1);
    }
    process.stdout.write('openapi/openapi.json is up to date\n');
    return;
  }
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`wrote ${target}\n`);
}

main()
  .then(() => process.exit(0))
  .catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
