import { offloadSteps, type Offload } from "../runtime/offload/index.js";

/**
 * Starts offloading heavy steps (runtime/offload/) to the evaluation thread whose
 * entry sits beside this module: `.ts` under tsx, `.js` once built (dist/cli/).
 */
export function offloadHeavySteps(): Offload {
  const ext = import.meta.url.endsWith(".ts") ? "ts" : "js";
  return offloadSteps(new URL(`./evaluation-thread.${ext}`, import.meta.url));
}
