/**
 * The answer of `POST /flags` and `POST /decide`: the project's remote config plus an empty set of feature
 * flags — this service has no feature flags, and says so by evaluating none rather than inventing values.
 *
 * Flag fields by protocol version, as posthog-js reads them (`lib/src/posthog-featureflags.js`,
 * `normalizeFlagsResponse` and `parseFlagsResponse`): `flags` (details per key, `/flags` and `/decide?v=4`),
 * `featureFlags` (values per key since `/decide?v=2`; a list of enabled keys in v1) and
 * `featureFlagPayloads` (since `/decide?v=3`). `errorsWhileComputingFlags: false` because nothing failed.
 * Older SDKs read the rest of their configuration from `/decide` (`config.enable_collect_everything` turned
 * autocapture on; kept off like `autocapture_opt_out`).
 */
import type { RemoteConfig } from './remote-config.js';

export type FlagsRoute = 'flags' | 'decide';

export interface FlagsResponse extends RemoteConfig {
  featureFlags: Record<string, never> | never[];
  featureFlagPayloads?: Record<string, never>;
  flags?: Record<string, never>;
  errorsWhileComputingFlags: false;
  config: { enable_collect_everything: false };
  isAuthenticated: false;
  toolbarParams: Record<string, never>;
}

export function flagsResponse(config: RemoteConfig, route: FlagsRoute, version: number): FlagsResponse {
  const decideV1 = route === 'decide' && version < 2;
  return {
    ...config,
    featureFlags: decideV1 ? [] : {},
    ...(route === 'flags' || version >= 3 ? { featureFlagPayloads: {} } : {}),
    ...(route === 'flags' || version >= 4 ? { flags: {} } : {}),
    errorsWhileComputingFlags: false,
    config: { enable_collect_everything: false },
    isAuthenticated: false,
    toolbarParams: {},
  };
}
