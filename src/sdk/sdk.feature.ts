import { defineFeature, fixtureText } from '../common/feature/feature.js';

/** The sdk feature: what it contributes to the application, the database, the CLI and the tests. */
export const SDK_FEATURE = defineFeature({
  name: 'sdk',
  load: async () => ({
    modules: [(await import('./sdk.module.js')).SdkModule],
  }),
  testFixture: {
    // The project's token is the {token} of /array/{token}/config(.js).
    create: async ({ apiToken }) => ({ token: apiToken }),
    bodies: {
      SdkController_flags: ({ apiToken }) => ({ token: apiToken, distinct_id: fixtureText('visitor') }),
      SdkController_decide: ({ apiToken }) => ({ token: apiToken, distinct_id: fixtureText('visitor') }),
    },
  },
});
