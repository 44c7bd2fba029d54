import { ApiError } from '../../common/errors/api-error.js';

/**
 * The levels of an organization's `plugins_access_level` (docs/decisions.md §9): 0 none, 3 configure (read records, use
 * them in projects' configs), 6 install (create, change and delete records), 9 root (also global records).
 */
export const PluginsAccessLevel = { NONE: 0, CONFIG: 3, INSTALL: 6, ROOT: 9 } as const;

export const insufficientPluginAccess = () =>
  ApiError.permissionDenied("Your organization's plugin access level is insufficient.");

export const cannotManageGlobal = () =>
  ApiError.permissionDenied("This organization can't manage global plugins.");

export const managedElsewhere = () =>
  ApiError.permissionDenied('This plugin installation is managed by another organization.');
