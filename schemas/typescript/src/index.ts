// The wire messages of the grounding worker, typed. Type-only: import them with `import type`.
export type * from "./messages.js";
