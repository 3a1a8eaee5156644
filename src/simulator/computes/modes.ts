/**
 * What an endpoint's `neon_stat_file_cache` is: the extension's, none, or one with other columns.
 */
export const EXTENSION_MODES = ["installed", "missing", "other_columns"] as const;
export type ExtensionMode = (typeof EXTENSION_MODES)[number];

/** The columns a view with "other columns" has instead of the extension's. */
export const OTHER_FILE_CACHE_COLUMNS = [
  "lfc_misses",
  "lfc_hits",
  "lfc_used",
  "lfc_writes",
  "lfc_hit_ratio_percent",
] as const;
