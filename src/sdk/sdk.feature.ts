import { defineFeature } from '../common/feature/feature.js';

/** The sdk feature: what it contributes to the application, the database, the CLI and the tests. */
export const SDK_FEATURE = defineFeature({
  name: 'sdk',
  load: async () => ({
    modules: [(await import('./sdk.module.js')).SdkModule],
  }),
});
