/**
 * Serialises the commits of one execution's runs inside this process.
 *
 * Every commit that writes history is fenced by the execution's history count
 * (see transition.ts). Sibling runs of a Map or Parallel all write the same
 * history, so with many of them in flight in one worker nearly every commit lost
 * that race and re-stepped: 19 retries per commit for a 500-item Map. Taking
 * turns per execution inside the process, and remembering the count the last
 * commit left, makes the fence fail only when another process committed first.
 * Across processes nothing changes: the fence still decides.
 */
export class ExecutionLocks {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly counts = new Map<string, number>();

  async run<T>(exec: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(exec);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous ? previous.then(() => mine) : mine;
    this.tails.set(exec, tail);
    if (previous) await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(exec) === tail) {
        // Nobody waits: forget the execution (the next transition loads its count).
        this.tails.delete(exec);
        this.counts.delete(exec);
      }
    }
  }

  /** The history count to step with: the larger of what was loaded and what this process last committed. */
  historyCount(exec: string, loaded: number): number {
    const known = this.counts.get(exec);
    return known !== undefined && known > loaded ? known : loaded;
  }

  committed(exec: string, count: number): void {
    if (this.tails.has(exec)) this.counts.set(exec, count);
  }
}
