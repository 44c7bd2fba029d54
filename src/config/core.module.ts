import { type DynamicModule, Global, Module } from '@nestjs/common';
import { Clock } from '../common/time/clock.js';
import { AppConfig } from './config.js';

/** Global providers every module may inject: the validated configuration and the clock. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CoreModule,
      providers: [{ provide: AppConfig, useValue: config }, Clock],
      exports: [AppConfig, Clock],
    };
  }
}
