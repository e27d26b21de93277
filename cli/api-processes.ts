import cluster, { type Worker } from "node:cluster";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";

/**
 * `serve` as several API processes on one port (STEPWISE_API_PROCESSES). Verifying
 * SigV4, parsing and answering JSON, and running Express executions are CPU work in
 * the API process, and one Node process uses one core. node:cluster's primary
 * accepts connections and hands them to its children in turn; each child runs
 * `serve` as a lone process would, on the Redis the primary chose. Child 0 also
 * runs the worker (unless --no-worker), so there is one engine room per `serve`.
 *
 * The primary only supervises: a child that dies after it was ready is replaced,
 * one that cannot start stops the service with its exit code (a port in use, a
 * bad setting: every child would fail alike), and a signal stops every child.
 * A child exits by itself when the primary dies (node:cluster closes its channel).
 */

/** Set in a child's environment to its index (0 runs the worker). */
export const CHILD_ENV = "STEPWISE_API_PROCESS";

/** What a child sends its primary once it listens and its worker (if any) runs. */
interface ReadyMessage {
  type: "stepwise-ready";
  port: number;
}

/** In a child: tells the primary this process is ready (no-op outside a cluster). */
export function reportReady(port: number): void {
  const message: ReadyMessage = { type: "stepwise-ready", port };
  if (cluster.isWorker) process.send?.(message);
}

/** This process's index among the API processes (`STEPWISE_API_PROCESS`), or undefined outside a cluster. */
export function apiProcessIndex(configured: number | undefined): number | undefined {
  return cluster.isWorker ? configured : undefined;
}

/** A replaced child is forked after this, so a child that dies at once cannot spin. */
const RESPAWN_MS = 1000;

export interface ApiProcesses {
  /** The port every child listens on, once all are ready (undefined if they never were). */
  readonly ready: Promise<number | undefined>;
  /** Resolves with the exit code once every child has exited. */
  readonly exited: Promise<number>;
  /** Sends SIGTERM to every child; `exited` resolves when they are gone. */
  stop(): void;
}

export function superviseApiProcesses(options: {
  count: number;
  /** The `serve` command's own arguments, given to each child. */
  argv: readonly string[];
  /** Added to each child's environment (the Redis the primary chose). */
  env: Record<string, string>;
  log: Logger;
}): ApiProcesses {
  cluster.setupPrimary({
    exec: childEntry(),
    args: ["serve", ...options.argv],
    execArgv: loaderArgs(process.execArgv),
  });
  const children = new Map<Worker, { index: number; ready: boolean }>();
  let stopping = false;
  let code = 0;
  let readyOnce = 0;
  let resolveReady!: (port: number | undefined) => void;
  let resolveExited!: (code: number) => void;
  const ready = new Promise<number | undefined>((r) => (resolveReady = r));
  const exited = new Promise<number>((r) => (resolveExited = r));
  const respawns = new Set<NodeJS.Timeout>();

  const fork = (index: number): void => {
    const child = cluster.fork({ ...options.env, [CHILD_ENV]: String(index) });
    children.set(child, { index, ready: false });
  };
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    for (const timer of respawns) clearTimeout(timer);
    respawns.clear();
    resolveReady(undefined);
    for (const child of children.keys()) child.process.kill("SIGTERM");
    if (children.size === 0) resolveExited(code);
  };

  const onMessage = (child: Worker, message: unknown): void => {
    const info = children.get(child);
    if (!info || info.ready || (message as ReadyMessage | null)?.type !== "stepwise-ready") return;
    info.ready = true;
    if (++readyOnce === options.count) resolveReady((message as ReadyMessage).port);
  };
  const onExit = (child: Worker, exitCode: number | null, signal: string | null): void => {
    const info = children.get(child);
    children.delete(child);
    if (!info) return;
    if (stopping) {
      if (children.size === 0) resolveExited(code);
      return;
    }
    if (!info.ready) {
      code = exitCode || 1;
      options.log.error(
        { apiProcess: info.index, exitCode, signal },
        `API process ${info.index} exited (${signal ?? `code ${exitCode}`}) before it was ready: stopping`,
      );
      stop();
      return;
    }
    options.log.warn(
      { apiProcess: info.index, exitCode, signal },
      `API process ${info.index} exited (${signal ?? `code ${exitCode}`}); starting another in ${RESPAWN_MS} ms`,
    );
    const timer = setTimeout(() => {
      respawns.delete(timer);
      if (!stopping) fork(info.index);
    }, RESPAWN_MS);
    respawns.add(timer);
  };
  cluster.on("message", onMessage);
  cluster.on("exit", onExit);
  void exited.then(() => {
    cluster.off("message", onMessage);
    cluster.off("exit", onExit);
  });
  for (let i = 0; i < options.count; i++) fork(i);
  return { ready, exited, stop };
}

/** The child's entry beside this module: `.ts` under tsx, `.js` once built. */
function childEntry(): string {
  const ext = import.meta.url.endsWith(".ts") ? "ts" : "js";
  return fileURLToPath(new URL(`./api-process.${ext}`, import.meta.url));
}

/**
 * The primary's Node options a child needs (`--import tsx`, heap sizes), without
 * what made the primary run something else than a file (`-e`, `--input-type`).
 */
export function loaderArgs(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (["-e", "--eval", "-p", "--print"].includes(arg)) {
      i++;
      continue;
    }
    if (/^(--eval|--print|--input-type)(=|$)/.test(arg)) continue;
    out.push(arg);
  }
  return out;
}
