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
