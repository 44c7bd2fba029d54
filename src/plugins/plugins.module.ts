import { Module } from '@nestjs/common';
import { MembershipsModule } from '../memberships/memberships.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { UsersModule } from '../users/users.module.js';
import { PluginCatalog } from './catalog/plugin-catalog.js';
import { PluginConfigsController } from './configs/plugin-configs.controller.js';
import { PluginConfigsProjectCleanup } from './configs/plugin-configs-project-cleanup.js';
import { PluginConfigsService } from './configs/plugin-configs.service.js';
import { PLUGIN_CATEGORY_CONTROLLERS } from './categories/plugins.controller.js';
import { PluginsRepository } from './plugins.repository.js';
import { PluginsService } from './records/plugins.service.js';

/**
 * Pipeline plugin records in four categories (one controller definition per category path), their source
 * files, change history, the repository catalog, and per-project plugin configs.
 */
@Module({
  imports: [MembershipsModule, OrganizationsModule, ProjectsModule, UsersModule],
  controllers: [...PLUGIN_CATEGORY_CONTROLLERS, PluginConfigsController],
  providers: [
    PluginsRepository,
    PluginsService,
    PluginConfigsService,
    PluginCatalog,
    PluginConfigsProjectCleanup,
  ],
  exports: [PluginsService],
})
export class PluginsModule {}
