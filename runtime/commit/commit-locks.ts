/**
 * Serialises the plans of one execution's commits inside this process, and
 * pipelines their sends.
 *
 * Every commit that writes history is fenced by the execution's history count
 * (see transition.ts). Sibling runs of a Map or Parallel all write the same
 * history, so with many of them in flight in one worker nearly every commit lost
 * that race and re-stepped: 19 retries per commit for a 500-item Map. Taking
 * turns per execution inside the process, and remembering the count (and chain head) the last
 * commit left, makes the fence fail only when another process committed first.
 * Across processes nothing changes: the fence still decides.
 *
 * Pipelining (issue 43): a turn covers the plan and the send of a commit, not its
 * reply. The next turn plans on the head the commit just sent will leave (`sent`),
 * so the commits of one execution's runs go out back to back, in one EVALSHA when
 * they are planned in one tick (store/redis.ts), and Redis runs them in that order
 * on the one connection. Waiting for each reply before planning the next made a
 * wide Map's commits one round trip each. A commit that writes nothing (another
 * process wrote history first, a stop went in front…) leaves the head planned after
 * it untrue: the commits sent behind it fail their fence and re-plan. The first
 * failure of a generation of sends resets the head (to the count and chain head
 * Redis answered with, when it answered with them) and starts a new generation;
 * failures of older generations were foreseen by that reset and change nothing.
 * Fences stay the only judge: a wrong head costs a re-plan, never a wrong write.
 */
/** The execution's history count (`hc`) and the chain hash of its last event (`hh`, audit/chain.ts). */
export interface HistoryHead {
  count: number;
  hash: string;
}

/** What `sent` hands back, for `settled` to say how that commit ended. */
export interface SentCommit {
  readonly gen: number;
  /** The commit appends history: the head planned after it counts on it. */
  readonly advances: boolean;
}

interface Heads {
  /** The head the last commit sent (or the last reply) leaves; none: the next plan uses its load's. */
  head: HistoryHead | undefined;
  gen: number;
  /** Commits sent and not answered yet. */
  inflight: number;
}

export class ExecutionLocks {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly heads = new Map<string, Heads>();

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
        // Nobody waits: forget the execution once nothing it sent is in flight
        // (the next transition loads its count).
        this.tails.delete(exec);
        this.forget(exec);
      }
    }
  }

  /**
   * The history head to step with: the later of what was loaded and what this
   * process last committed or sent (the count and its chain hash go together).
   */
  historyHead(exec: string, loaded: HistoryHead): HistoryHead {
    const known = this.heads.get(exec)?.head;
    return known !== undefined && known.count > loaded.count ? known : loaded;
  }

  /** A commit's reply named the head (kept while turns are queued or commits in flight). */
  committed(exec: string, head: HistoryHead): void {
    const entry = this.heads.get(exec);
    if (entry) entry.head = head;
    else if (this.tails.has(exec)) this.heads.set(exec, { head, gen: 0, inflight: 0 });
  }

  /**
   * A commit planned in a turn was sent; `after`: the head it leaves when it
   * appends history. The next turn plans on it.
   */
  sent(exec: string, after: HistoryHead | undefined): SentCommit {
    let entry = this.heads.get(exec);
    if (!entry) this.heads.set(exec, (entry = { head: undefined, gen: 0, inflight: 0 }));
    entry.inflight++;
    if (after) entry.head = after;
    return { gen: entry.gen, advances: after !== undefined };
  }

  /**
   * The reply of a sent commit: `committed`, or what a commit that wrote nothing
   * learned of the head (`raced`: Redis's count and chain head; `undefined`: nothing).
   */
  settled(exec: string, commit: SentCommit, outcome: "committed" | HistoryHead | undefined): void {
    const entry = this.heads.get(exec);
    if (!entry) return;
    entry.inflight--;
    if (outcome !== "committed" && entry.gen === commit.gen) {
      // What was planned behind this commit counted on it: a new generation, on Redis's head.
      if (outcome !== undefined) {
        entry.gen++;
        entry.head = outcome;
      } else if (commit.advances) {
        entry.gen++;
        entry.head = undefined;
      }
    }
    if (!this.tails.has(exec)) this.forget(exec);
  }

  private forget(exec: string): void {
    const entry = this.heads.get(exec);
    if (entry && entry.inflight <= 0) this.heads.delete(exec);
  }
}
