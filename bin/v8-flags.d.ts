/** Sets the V8 flags gatesync's launcher starts with (unless `NODE_OPTIONS` or node's command line sets them). */
export function applyStartupFlags(): void;
