import { defineFeature, type FeatureTestFixture, fixtureText } from '../common/feature/feature.js';
import { ORGS_COMMANDS, ORGS_GROUP } from './plugins.cli.js';
import { PLUGINS_SETTINGS } from './plugins.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    plugin: true;
  }
}

/** The plugin categories (their collection in the path, their controller's name). */
const CATEGORIES = [
  ['pipeline_destinations', 'PipelineDestinations'],
  ['pipeline_frontend_apps', 'PipelineFrontendApps'],
  ['pipeline_import_apps', 'PipelineImportApps'],
  ['pipeline_transformations', 'PipelineTransformations'],
] as const;

const fixturePlugin = () => ({ name: fixtureText('Plugin '), plugin_type: 'source' });

/** One plugin of each category, and a config of the transformation in the project. */
const PLUGINS_FIXTURE: FeatureTestFixture = {
  async create({ request, organizationId, projectId }) {
    const ids: Record<string, number> = {};
    for (const [collection] of CATEGORIES) {
      const plugin = await request<{ id: number }>(
        'post',
        `/api/organizations/${organizationId}/${collection}`,
        fixturePlugin(),
      );
      ids[collection] = plugin.id;
    }
    const config = await request<{ id: number }>('post', `/api/projects/${projectId}/plugin_configs`, {
      plugin: ids.pipeline_transformations,
      enabled: true,
      config: { a: 'b' },
    });
    return { ...ids, plugin_configs: config.id };
  },
  bodies: {
    ...Object.fromEntries(
      CATEGORIES.flatMap(([, controller]) => [
        [`${controller}Controller_create`, fixturePlugin],
        [`${controller}Controller_updateSource`, () => ({ 'index.ts': 'export const x = 1' })],
      ]),
    ),
    PluginConfigsController_create: ({ ids }) => ({
      plugin: ids.pipeline_transformations,
      config: { a: 'b' },
    }),
  },
};

/** The plugins feature: what it contributes to the application, the database, the CLI and the tests. */
export const PLUGINS_FEATURE = defineFeature({
  name: 'plugins',
  e2e: ['plugins', 'plugin-configs', 'plugin-tenancy', 'plugins-catalog'],
  load: async () => ({
    modules: [(await import('./plugins.module.js')).PluginsModule],
    entities: [
      (await import('./records/plugin.entity.js')).PluginEntity,
      (await import('./records/plugin-source-file.entity.js')).PluginSourceFileEntity,
      (await import('./activity/plugin-activity.entity.js')).PluginActivityEntity,
      (await import('./configs/plugin-config.entity.js')).PluginConfigEntity,
    ],
    migrations: [
      (await import('./migrations/1795243845686-PluginRecords.js')).PluginRecords1795243845686,
      (await import('./migrations/1795467468180-PluginTenancy.js')).PluginTenancy1795467468180,
      (await import('./migrations/1795467752796-PluginConfigNames.js')).PluginConfigNames1795467752796,
    ],
  }),
  scopes: ['plugin'],
  settings: PLUGINS_SETTINGS,
  testFixture: PLUGINS_FIXTURE,
  cliGroups: [ORGS_GROUP],
  cli: ORGS_COMMANDS,
});
