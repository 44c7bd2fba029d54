import { defineFeature, fixtureText } from '../common/feature/feature.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    feature_flag: true;
  }
}

/** The sdk feature: what it contributes to the application, the database, the CLI and the tests. */
export const SDK_FEATURE = defineFeature({
  name: 'sdk',
  e2e: ['sdk', 'flag-definitions'],
  load: async () => ({
    modules: [(await import('./sdk.module.js')).SdkModule],
  }),
  // `feature_flag:read`: the server SDKs' definitions poll, as PostHog scopes it.
  scopes: ['feature_flag'],
  testFixture: {
    // The project's token is the {token} of /array/{token}/config(.js).
    create: async ({ apiToken }) => ({ token: apiToken }),
    bodies: {
      SdkController_flags: ({ apiToken }) => ({ token: apiToken, distinct_id: fixtureText('visitor') }),
      SdkController_decide: ({ apiToken }) => ({ token: apiToken, distinct_id: fixtureText('visitor') }),
    },
  },
});
