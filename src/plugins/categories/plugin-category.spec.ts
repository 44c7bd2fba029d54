import { describe, expect, it } from '@jest/globals';
import { CATEGORY_SEGMENTS, categoryOf, defaultCapabilities, PLUGIN_CATEGORIES } from './plugin-category.js';

describe('categoryOf', () => {
  it.each([
    [{ methods: ['processEvent'] }, 'transformations'],
    [{ methods: ['setupPlugin', 'processEvent', 'onEvent'] }, 'transformations'],
    [{ methods: ['processEvent'], scheduled_tasks: ['runEveryMinute'] }, 'transformations'],
    [{ methods: ['onEvent'] }, 'destinations'],
    [{ methods: ['composeWebhook'] }, 'destinations'],
    [{ methods: ['onEvent'], scheduled_tasks: ['runEveryHour'] }, 'destinations'],
    [{ scheduled_tasks: ['runEveryMinute'] }, 'import_apps'],
    [{ methods: [], scheduled_tasks: ['runEveryDay'] }, 'import_apps'],
    [{ methods: ['setupPlugin'] }, 'import_apps'],
    [{}, 'frontend_apps'],
    [{ jobs: ['exportHistory'] }, 'frontend_apps'],
    [{ methods: [], scheduled_tasks: [] }, 'frontend_apps'],
  ] as const)('puts %j in %s', (capabilities, category) => {
    expect(categoryOf({ ...capabilities } as never)).toBe(category);
  });

  it('gives each category default capabilities that belong to it', () => {
    for (const category of PLUGIN_CATEGORIES)
      expect(categoryOf(defaultCapabilities(category))).toBe(category);
  });

  it('maps each category to its path segment', () => {
    expect(Object.values(CATEGORY_SEGMENTS).sort()).toEqual([
      'pipeline_destinations',
      'pipeline_frontend_apps',
      'pipeline_import_apps',
      'pipeline_transformations',
    ]);
  });
});
