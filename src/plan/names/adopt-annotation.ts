/** The annotation that adopts an object made by hand (adoption.ts); apart, so that `gatesync --help` names it without loading the planner. */
export const adoptAnnotation = "gatesync.dev/adopt";
