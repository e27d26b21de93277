import type { HistoryEvent } from "../engine/core/history.js";

/**
 * `stepwise run`'s progress on a terminal: one line, redrawn in place, naming the
 * state the execution is in and the time it has taken, and saying so when the run
 * sleeps through a Wait or a retry backoff (which --virtual would skip).
 */

/** Seconds as people read them: "86,400", "7", "1.5". */
export function formatSeconds(ms: number): string {
  return (ms / 1000).toLocaleString("en-US", { maximumFractionDigits: ms < 10_000 ? 1 : 0 });
}

export interface Sleep {
  realMs: number;
  executionMs: number;
}

export function progressLine(p: {
  state: string | undefined;
  elapsedMs: number;
  sleeping: Sleep | undefined;
}): string {
  const where = p.state === undefined ? "starting" : `in ${p.state}`;
  let wait = "";
  if (p.sleeping !== undefined) {
    const { realMs, executionMs } = p.sleeping;
    const scaled =
      Math.abs(realMs - executionMs) >= 1 ? ` (${formatSeconds(realMs)} s with --time-scale)` : "";
    wait = ` — waiting ${formatSeconds(executionMs)} s${scaled} — use --virtual to skip`;
  }
  return `${where}, ${formatSeconds(p.elapsedMs)} s${wait}`;
}

/** The state a batch of history events leaves the execution in, if they name one. */
export function enteredState(events: readonly HistoryEvent[]): string | undefined {
  let state: string | undefined;
  for (const event of events) {
    const name = event.stateEnteredEventDetails?.name;
    if (typeof name === "string") state = name;
  }
  return state;
}

export class RunProgress {
  private state: string | undefined;
  private sleeping: Sleep | undefined;
  private readonly started: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly write: (text: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
    // Elapsed time moves even when nothing else does; unref'd, it never holds the process.
    this.timer = setInterval(() => this.draw(), 500);
    this.timer.unref();
    this.draw();
  }

  onHistory(events: readonly HistoryEvent[]): void {
    const state = enteredState(events);
    if (state !== undefined) this.state = state;
    this.sleeping = undefined;
  }

  onSleep(realMs: number, executionMs: number): void {
    this.sleeping = { realMs, executionMs };
    this.draw();
  }

  /** Clears the line, so the result prints on a clean one. */
  stop(): void {
    clearInterval(this.timer);
    this.write("\r\x1b[K");
  }

  private draw(): void {
    const line = progressLine({
      state: this.state,
      elapsedMs: this.now() - this.started,
      sleeping: this.sleeping,
    });
    this.write(`\r\x1b[K${line}`);
  }
}
