// The evaluation thread's entry (runtime/offload/): heavy steps of `serve` and `worker`
// run here, off the thread that answers requests. Beside the CLI's entries in dist/cli/.
import { serveSteps } from "../runtime/offload/evaluation-thread.js";

serveSteps();
