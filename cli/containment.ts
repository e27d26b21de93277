/**
 * Where an error goes that escaped every handler of this process.
 *
 * Faults of one execution are caught per job (runtime/worker/worker.ts, give-up.ts):
 * they fail that execution, never the process. What is left are errors thrown
 * outside any job's promise: a library callback that throws (ioredis's
 * auto-pipeline did, after a call it could not encode; issue 20), or a promise
 * nobody awaited. Node's default is to exit, which for `stepwise serve` takes
 * the API down with the worker, and the same job would do it again after every
 * restart. So the long-running commands contain them: the error is reported
 * with its stack and counted, and the process keeps serving. A process that
 * keeps failing this way shows it in the log and in /health's neighbour
 * /metrics, rather than in a restart loop.
 */
export function containStrayErrors(report: (kind: string, err: unknown) => void): () => void {
  const onException = (err: unknown): void => report("uncaughtException", err);
  const onRejection = (err: unknown): void => report("unhandledRejection", err);
  process.on("uncaughtException", onException);
  process.on("unhandledRejection", onRejection);
  return () => {
    process.off("uncaughtException", onException);
    process.off("unhandledRejection", onRejection);
  };
}
