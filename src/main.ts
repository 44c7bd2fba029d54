import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { APP_OPTIONS, configureApp } from './app.setup.js';
import { AppConfig, ConfigError } from './config/config.js';
import { bootLog, prepareDatabase, printBootstrapKey, shutdownGracefully } from './bootstrap.js';

async function main(): Promise<void> {
  const database = await prepareDatabase(AppConfig.fromEnv());
  const app = configureApp(await NestFactory.create(AppModule.forRoot(database.config), APP_OPTIONS));
  await app.init();
  await printBootstrapKey(app, database.config.get('PORT'));
  await app.listen(database.config.get('PORT'), database.config.get('HOST'));
  shutdownGracefully(app, database);
  bootLog(`listening on http://localhost:${database.config.get('PORT')} (Swagger UI at /docs)`);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `${err instanceof ConfigError ? err.message : ((err as Error)?.stack ?? String(err))}\n`,
  );
  process.exit(1);
});
