import { defineFeature } from '../common/feature/feature.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    user: true;
  }
}

/** The users feature: what it contributes to the application, the database, the CLI and the tests. */
export const USERS_FEATURE = defineFeature({
  name: 'users',
  e2e: ['users-projects'],
  load: async () => ({
    modules: [(await import('./current-user.module.js')).CurrentUserModule],
    entities: [(await import('./user.entity.js')).UserEntity],
  }),
  scopes: ['user'],
  interceptors: [
    {
      name: 'current-refs',
      order: 10,
      handler: async () => (await import('./current-refs.interceptor.js')).CurrentRefsInterceptor,
    },
  ],
});
