/**
 * Serialises the commits of one execution's runs inside this process.
 *
 * Every commit that writes history is fenced by the execution's history count
 * (see transition.ts). Sibling runs of a Map or Parallel all write the same
 * history, so with many of them in flight in one worker nearly every commit lost
 * that race and re-stepped: 19 retries per commit for a 500-item Map. Taking
 * turns per execution inside the process, and remembering the count (and chain head) the last
 * commit left, makes the fence fail only when another process committed first.
 * Across processes nothing changes: the fence still decides.
 */
/** The execution's history count (`hc`) and the chain hash of its last event (`hh`, audit/chain.ts). */
export interface HistoryHead {
  count: number;
  hash: string;
}

export class ExecutionLocks {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly heads = new Map<string, HistoryHead>();

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
        this.heads.delete(exec);
      }
    }
  }

  /**
   * The history head to step with: the later of what was loaded and what this
   * process last committed (the count and its chain hash go together).
   */
  historyHead(exec: string, loaded: HistoryHead): HistoryHead {
    const known = this.heads.get(exec);
    return known !== undefined && known.count > loaded.count ? known : loaded;
  }

  committed(exec: string, head: HistoryHead): void {
    if (this.tails.has(exec)) this.heads.set(exec, head);
  }
}
