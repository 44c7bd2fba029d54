import { defineFeature } from '../common/feature/feature.js';
import { ORGS_COMMANDS, ORGS_GROUP } from './plugins.cli.js';
import { PLUGINS_SETTINGS } from './plugins.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    plugin: true;
  }
}

/** The plugins feature: what it contributes to the application, the database, the CLI and the tests. */
export const PLUGINS_FEATURE = defineFeature({
  name: 'plugins',
  load: async () => ({
    modules: [(await import('./plugins.module.js')).PluginsModule],
    entities: [
      (await import('./records/plugin.entity.js')).PluginEntity,
      (await import('./records/plugin-source-file.entity.js')).PluginSourceFileEntity,
      (await import('./activity/plugin-activity.entity.js')).PluginActivityEntity,
      (await import('./configs/plugin-config.entity.js')).PluginConfigEntity,
    ],
    migrations: [
      (await import('../database/migrations/1795243845686-PluginRecords.js')).PluginRecords1795243845686,
      (await import('../database/migrations/1795467468180-PluginTenancy.js')).PluginTenancy1795467468180,
      (await import('../database/migrations/1795467752796-PluginConfigNames.js'))
        .PluginConfigNames1795467752796,
    ],
  }),
  scopes: ['plugin'],
  settings: PLUGINS_SETTINGS,
  cliGroups: [ORGS_GROUP],
  cli: ORGS_COMMANDS,
});
