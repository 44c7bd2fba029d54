import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './config.js';

/** The validated configuration, which every module may inject. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CoreModule,
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
