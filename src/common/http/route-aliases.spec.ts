import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, Post } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import {
  aliasedPath,
  aliasOfPath,
  applyRouteAliases,
  controllersOf,
  type RouteAlias,
} from './route-aliases.js';

const ENVIRONMENTS: RouteAlias = {
  under: '/api/projects',
  alias: '/api/environments',
  description: 'The environment path.',
};

const pathOf = (target: object): unknown => Reflect.getMetadata(PATH_METADATA, target);

describe('route aliases', () => {
  it("gives a new feature's project controller its twin, found through the modules it imports", () => {
    @Controller('api/projects/:project_id/widgets')
    class WidgetsController {
      @Get()
      list() {}
      @Post(':id/spin')
      spin() {}
    }
    @Controller('api/organizations/:organization_id/widgets')
    class OrganizationWidgetsController {
      @Get()
      list() {}
    }
    @Module({ controllers: [WidgetsController] })
    class WidgetsInnerModule {}
    @Module({ imports: [WidgetsInnerModule], controllers: [OrganizationWidgetsController] })
    class WidgetsModule {}

    const controllers = controllersOf([{ module: WidgetsModule, imports: [] }]);
    expect([...controllers]).toEqual(
      expect.arrayContaining([WidgetsController, OrganizationWidgetsController]),
    );
    applyRouteAliases(controllers, [ENVIRONMENTS]);
    applyRouteAliases(controllers, [ENVIRONMENTS]);

    expect(pathOf(WidgetsController)).toEqual([
      'api/projects/:project_id/widgets',
      '/api/environments/:project_id/widgets',
    ]);
    // Handlers keep their own paths; an organization route gets no twin.
    expect(pathOf(WidgetsController.prototype.spin)).toBe(':id/spin');
    expect(pathOf(OrganizationWidgetsController)).toBe('api/organizations/:organization_id/widgets');
  });

  it('gives a handler of a root controller a second path, and leaves the prefix itself alone', () => {
    @Controller()
    class RootController {
      @Get('api/projects/:id')
      retrieve() {}
      @Get('api/projects')
      list() {}
      @Get('api/organizations/:organization_id/projects/:id')
      inOrganization() {}
    }
    applyRouteAliases([RootController], [ENVIRONMENTS]);
    expect(pathOf(RootController.prototype.retrieve)).toEqual(['api/projects/:id', '/api/environments/:id']);
    expect(pathOf(RootController.prototype.list)).toBe('api/projects');
    expect(pathOf(RootController.prototype.inOrganization)).toBe(
      'api/organizations/:organization_id/projects/:id',
    );
  });

  it('refuses a controller at the prefix, whose other routes would be aliased too', () => {
    @Controller('api/projects')
    class ProjectsAtPrefixController {
      @Get(':id')
      retrieve() {}
    }
    expect(() => applyRouteAliases([ProjectsAtPrefixController], [ENVIRONMENTS])).toThrow(
      'ProjectsAtPrefixController.retrieve answers /api/projects/:id, under /api/projects, but its controller path /api/projects is not a prefix of /api/environments',
    );
  });

  it('maps a documented twin path back to its original', () => {
    const path = '/api/environments/{project_id}/events';
    expect(aliasOfPath(path, [ENVIRONMENTS])).toBe(ENVIRONMENTS);
    expect(aliasedPath(path, ENVIRONMENTS)).toBe('/api/projects/{project_id}/events');
    expect(aliasOfPath('/api/environments', [ENVIRONMENTS])).toBeUndefined();
    expect(aliasOfPath('/api/projects/{id}', [ENVIRONMENTS])).toBeUndefined();
  });
});
