import type { Redis } from "ioredis";
import type { TaskRunner } from "../../task-runners/runner.js";
import { RedisRuntime } from "../runtime.js";
import type { RuntimeSettings } from "../settings.js";
import { ChildLinks } from "./child-links.js";
import { childRunner } from "./child-runner.js";
import { settleChildren, type ChildRuntime } from "./child-watch.js";
import { EXECUTION_FIELDS } from "../store/fields.js";
import { shortId } from "../store/ids.js";

export { ChildLinks, childKeys } from "./child-links.js";

/** How often a worker looks at the parents waiting on children (one HLEN when none waits). */
export const CHILD_POLL_MS = 500;
const CLOSE_WAIT_MS = 2_000;

export interface ChildExecutions {
  runner: TaskRunner;
  close(): Promise<void>;
}

/**
 * Child executions of other state machines (`arn:aws:states:::states:startExecution`)
 * in a worker: the runner that starts them, and the watch that answers a `.sync`
 * parent when its child ends and stops the child when its parent ended. Both use
 * a runtime opened on first need (its own connections), as the trigger loop does.
 */
export function childExecutions(
  redis: Redis,
  settings: RuntimeSettings,
  onError: (err: unknown) => void,
): ChildExecutions {
  const links = new ChildLinks(redis, settings.prefix);
  let runtime: RedisRuntime | undefined;
  const open = (): RedisRuntime => (runtime ??= new RedisRuntime(settings));
  const watched = (): ChildRuntime => {
    const rt = open();
    return {
      describeExecution: (id) => rt.describeExecution(id),
      stopExecution: (id, options) => rt.stopExecution(id, options),
      sendTaskSuccess: (token, output) => rt.sendTaskSuccess(token, output),
      sendTaskFailure: (token, error, cause) => rt.sendTaskFailure(token, error, cause),
      statusOf: async (id) =>
        redis.hget((await rt.keysOf(id)).execution(shortId(id)), EXECUTION_FIELDS.status),
      // The token was issued by the parent's shard, whose `tok` hash holds it while its task waits.
      taskWaits: async (link) =>
        (await redis.hexists((await rt.keysOf(link.parent)).tokens, link.token)) === 1,
    };
  };
  let running: Promise<void> | undefined;
  let closed = false;
  const timer = setInterval(() => {
    if (running || closed) return;
    running = settleChildren(links, watched, onError)
      .catch((err: unknown) => (closed ? undefined : onError(err)))
      .finally(() => (running = undefined));
  }, CHILD_POLL_MS);
  timer.unref();
  return {
    runner: childRunner(open, links),
    async close() {
      closed = true;
      clearInterval(timer);
      await within(running, CLOSE_WAIT_MS);
      await within(runtime?.close(), CLOSE_WAIT_MS);
    },
  };
}

function within(promise: Promise<unknown> | undefined, ms: number): Promise<unknown> {
  if (!promise) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.catch(() => undefined),
    new Promise((done) => (timer = setTimeout(done, ms))),
  ]).finally(() => clearTimeout(timer));
}
