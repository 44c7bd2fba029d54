import { defineFeature } from '../common/feature/feature.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    access_control: true;
  }
}

/**
 * The access controls feature: the API of who may see what (the rules' table and their resolution belong to the
 * memberships feature, below the projects, which read them on every request).
 */
export const ACCESS_CONTROLS_FEATURE = defineFeature({
  name: 'access-controls',
  e2e: ['access-controls'],
  load: async () => ({
    modules: [(await import('./access-controls.module.js')).AccessControlsModule],
  }),
  scopes: ['access_control'],
});
