/** The default management body limit: tens of MB, above the largest public API descriptions. (Apart, so that `gatesync sandbox --help` shows it without loading the sandbox.) */
export const defaultMaxBodyBytes = 64 * 1024 * 1024;
