/**
 * The DataSource the typeorm CLI uses, e.g. `npm run typeorm -- migration:show`.
 *
 * `npm run build` compiles this file to dist/ormconfig.js beside the compiled application, whose options
 * function (src/database/typeorm-options.ts) it loads, so the CLI, the service and the tests cannot disagree
 * about entities, migrations or naming. The database comes from DATABASE_URL; without it, the embedded
 * PostgreSQL of `npm start` is used (it must be running, or is started for the command).
 */
import type { DataSource } from 'typeorm';

interface DataSourceModule {
  loadCliDataSource(features: readonly unknown[]): Promise<DataSource>;
}

const modulePath = new URL('./database/cli-data-source.js', import.meta.url).href;
const featuresPath = new URL('./features.js', import.meta.url).href;
const { loadCliDataSource } = (await import(modulePath)) as DataSourceModule;
const { loadServiceFeatures } = (await import(featuresPath)) as { loadServiceFeatures(): Promise<unknown[]> };

export default await loadCliDataSource(await loadServiceFeatures());
