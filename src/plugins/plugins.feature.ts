import { defineFeature } from '../common/feature/feature.js';
import { PluginRecords1795243845686 } from '../database/migrations/1795243845686-PluginRecords.js';
import { PluginTenancy1795467468180 } from '../database/migrations/1795467468180-PluginTenancy.js';
import { PluginConfigNames1795467752796 } from '../database/migrations/1795467752796-PluginConfigNames.js';
import { PluginActivityEntity } from './plugin-activity.entity.js';
import { PluginConfigEntity } from './plugin-config.entity.js';
import { PluginSourceFileEntity } from './plugin-source-file.entity.js';
import { PluginEntity } from './plugin.entity.js';
import { PluginsModule } from './plugins.module.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    plugin: true;
  }
}

/** The plugins feature: what it contributes to the application, the database, the CLI and the tests. */
export const PLUGINS_FEATURE = defineFeature({
  name: 'plugins',
  modules: [PluginsModule],
  entities: [PluginEntity, PluginSourceFileEntity, PluginActivityEntity, PluginConfigEntity],
  migrations: [PluginRecords1795243845686, PluginTenancy1795467468180, PluginConfigNames1795467752796],
  scopes: ['plugin'],
  settings: ['PLUGIN_REPOSITORY_URL', 'PLUGIN_REPOSITORY_TIMEOUT_MS', 'PLUGIN_REPOSITORY_CACHE_SECONDS'],
});
