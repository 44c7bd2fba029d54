/**
 * PostHog's statistical methods of experiments, and its blank value: its organizations' and teams'
 * `default_experiment_stats_method` are `blank=True`, so `""` is accepted and stored as it is (null too).
 */
export const EXPERIMENT_STATS_METHODS = ['bayesian', 'frequentist', ''] as const;
export type ExperimentStatsMethod = (typeof EXPERIMENT_STATS_METHODS)[number];

export const EXPERIMENT_STATS_METHOD_MESSAGE = 'Must be "bayesian", "frequentist", "" or null.';
