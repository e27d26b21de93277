/**
 * `npx stepwise serve &` then `kill $!` signals npm, not the service: npm exits
 * without passing the signal on, its `sh -c` goes with it, and the service, left
 * to init, would run on with its private redis-server, holding the port. So a
 * process started through npx stops when its launcher is gone: its parent process
 * changes (it is re-parented), which it notices within half a second.
 *
 * Only under npx (`npm_command=exec`): a service started with `nohup node
 * bin/stepwise.js serve &` is meant to outlive the shell that started it.
 */
export function whenLauncherGone(onGone: () => void, everyMs = 500): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * A drain that does not end (a Redis that went away with the service, as `docker
 * compose down` stops both) ends here: after `seconds` the process says so and
 * exits 1. The jobs it still held go to other workers when their locks expire.
 */
export function exitAfter(seconds: number, log: (message: string) => void): void {
  setTimeout(() => {
    log(
      `shutdown did not finish within ${seconds} s (STEPWISE_SHUTDOWN_SECONDS): exiting now; jobs not finished are taken again by other workers`,
    );
    process.exit(1);
  }, seconds * 1000).unref();
}

/** How long the worker lets its jobs run before handing them back: most of the shutdown's time. */
export function drainMs(seconds: number): number {
  return Math.max(500, seconds * 1000 - 1500);
}
