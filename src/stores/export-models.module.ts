import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { LoadedFeature } from '../common/feature/feature.js';
import { EVENTS_STORE, type EventsStore } from './events-store.js';
import type { ExportModel, ExportStores, SourceRange } from './export-model.js';

/** A model as batch exports run it: its statement reads through the application's stores. */
export type BoundExportModel = Omit<ExportModel, 'statement'> & {
  statement(range: SourceRange): ReturnType<ExportModel['statement']>;
};

/**
 * The export models batch exports can run: those the features declare in their manifests (`exportModels`),
 * by name (src/stores/export-model.ts). Batch exports know no table: a model brings its columns, key and
 * statement.
 */
export class ExportModels {
  private readonly byName = new Map<string, BoundExportModel>();

  constructor(models: readonly ExportModel[], stores: ExportStores) {
    for (const model of models) {
      if (this.byName.has(model.name))
        throw new Error(`two features declare the export model '${model.name}'`);
      this.byName.set(model.name, { ...model, statement: (range) => model.statement(range, stores) });
    }
  }

  /** The model of this name (an export's `model`); throws for one no feature declares. */
  get(name: string): BoundExportModel {
    const model = this.byName.get(name);
    if (!model) throw new Error(`no feature declares the export model '${name}'`);
    return model;
  }

  /** The names of the declared models. */
  names(): string[] {
    return [...this.byName.keys()];
  }
}

/**
 * Provides `ExportModels`, filled from the features' manifests, to every module (batch exports use it), each
 * model's statement bound to the application's stores.
 */
@Global()
@Module({})
export class ExportModelsModule {
  static forRoot(features: readonly LoadedFeature[]): DynamicModule {
    const models = features.flatMap((feature) => feature.exportModels ?? []);
    return {
      module: ExportModelsModule,
      providers: [
        {
          provide: ExportModels,
          // The events store is bound by the events feature (global); its models read events through it.
          useFactory: (events: EventsStore) => new ExportModels(models, { events }),
          inject: [EVENTS_STORE],
        },
      ],
      exports: [ExportModels],
    };
  }
}
