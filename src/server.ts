import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { loadServiceFeatures } from './features.js';
import { APP_OPTIONS, configureApp } from './app.setup.js';
import type { AddressInfo } from 'node:net';
import { listeningMessage } from './common/http/listen-address.js';
import { explainListenError, PortInUseError } from './common/http/port-in-use.js';
import { setBootLogLevel, setUpLogging } from './common/logging/logger-options.js';
import { AppConfig, ConfigError } from './config/config.js';
import { bootLog, prepareDatabase, printBootstrapKey, shutdownGracefully } from './bootstrap.js';
import type { ResolvedDatabase } from './database/resolve-database.js';

async function main(): Promise<void> {
  const config = AppConfig.fromEnv();
  await setUpLogging(config);
  setBootLogLevel(config.get('LOG_LEVEL'));
  const features = await loadServiceFeatures();
  const database: ResolvedDatabase = await prepareDatabase(config, features);
  const port = database.config.get('PORT');
  const host = database.config.get('HOST');
  let address: AddressInfo | string | null;
  try {
    const app = configureApp(
      await NestFactory.create(AppModule.forRoot(database.config, features), APP_OPTIONS),
    );
    try {
      await app.init();
      await app.listen(port, host).catch((err: unknown) => {
        throw explainListenError(err, 'PORT', port, host);
      });
      address = (app.getHttpServer() as import('node:http').Server).address();
      // After listening, so the banner names the port bound (PORT=0: the one the system chose).
      await printBootstrapKey(
        app,
        database.config,
        typeof address === 'object' && address ? address.port : port,
      );
    } catch (err) {
      await app.close().catch(() => undefined);
      throw err;
    }
    shutdownGracefully(app, database);
  } catch (err) {
    await database.stop().catch(() => undefined);
    throw err;
  }
  bootLog(listeningMessage(address));
}

main().catch((err: unknown) => {
  const known = err instanceof ConfigError || err instanceof PortInUseError;
  process.stderr.write(`${known ? (err as Error).message : ((err as Error)?.stack ?? String(err))}\n`);
  process.exit(1);
});
