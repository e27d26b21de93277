import type { HistoryEvent } from "../engine/core/history.js";

/**
 * `stepwise executions watch`: what a person sees of an execution's history as it
 * arrives. One line per state when it is left (✓ done, ✗ failed, with the time it
 * took), the state it is in now (drawn with a spinner on a terminal), and the
 * outcome at the end. Pure: it turns events into lines; the command prints them.
 */
export interface WatchLine {
  mark: "done" | "failed" | "entered" | "end";
  text: string;
}

const FAILED = /(Failed|TimedOut|Aborted)$/;

export class WatchView {
  private readonly entered = new Map<string, number>();
  private readonly failed = new Set<string>();
  private startedAt: number | undefined;
  /** The state the execution is in now (the last entered and not left). */
  current: { name: string; since: number } | undefined;

  /** Lines for one history event (none for most). */
  apply(event: HistoryEvent): WatchLine[] {
    const at = Date.parse(event.timestamp);
    this.startedAt ??= at;
    const entered = event.stateEnteredEventDetails?.name;
    if (typeof entered === "string") {
      this.entered.set(entered, at);
      this.current = { name: entered, since: at };
      return [{ mark: "entered", text: entered }];
    }
    const exited = event.stateExitedEventDetails?.name;
    if (typeof exited === "string") {
      const since = this.entered.get(exited) ?? at;
      if (this.current?.name === exited) this.current = undefined;
      const failed = this.failed.delete(exited);
      return [{ mark: failed ? "failed" : "done", text: `${exited}  ${seconds(at - since)}` }];
    }
    if (FAILED.test(event.type) && this.current && !event.type.startsWith("Execution")) {
      // A task or branch failed inside the state: the state is marked when it is left.
      this.failed.add(this.current.name);
    }
    if (event.type.startsWith("Execution") && event.type !== "ExecutionStarted") {
      const outcome = event.type.replace(/^Execution/, "").toUpperCase();
      return [{ mark: "end", text: `${outcome} in ${seconds(at - (this.startedAt ?? at))}` }];
    }
    return [];
  }
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
}
