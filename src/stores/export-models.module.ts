import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { LoadedFeature } from '../common/feature/feature.js';
import type { ExportModel } from './export-model.js';

/**
 * The export models batch exports can run: those the features declare in their manifests (`exportModels`),
 * by name (src/stores/export-model.ts). Batch exports know no table: a model brings its columns, key and
 * statement.
 */
export class ExportModels {
  private readonly byName = new Map<string, ExportModel>();

  constructor(models: readonly ExportModel[]) {
    for (const model of models) {
      if (this.byName.has(model.name))
        throw new Error(`two features declare the export model '${model.name}'`);
      this.byName.set(model.name, model);
    }
  }

  /** The model of this name (an export's `model`); throws for one no feature declares. */
  get(name: string): ExportModel {
    const model = this.byName.get(name);
    if (!model) throw new Error(`no feature declares the export model '${name}'`);
    return model;
  }

  /** The names of the declared models. */
  names(): string[] {
    return [...this.byName.keys()];
  }
}

/** Provides `ExportModels`, filled from the features' manifests, to every module (batch exports use it). */
@Global()
@Module({})
export class ExportModelsModule {
  static forRoot(features: readonly LoadedFeature[]): DynamicModule {
    const models = new ExportModels(features.flatMap((feature) => feature.exportModels ?? []));
    return {
      module: ExportModelsModule,
      providers: [{ provide: ExportModels, useValue: models }],
      exports: [ExportModels],
    };
  }
}
