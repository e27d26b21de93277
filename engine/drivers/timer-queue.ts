/** Armed timers ordered by due time (a binary heap); cancelled ones are skipped lazily. */
export interface Timer {
  runId: string;
  timerId: string;
  at: number;
}

/** Earlier due time first; equal times fire in the order they were armed. */
function before(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export class TimerQueue {
  private heap: (Timer & { seq: number })[] = [];
  private seq = 0;
  private live = new Set<string>();

  private static key(runId: string, timerId: string): string {
    return `${runId}\u0000${timerId}`;
  }

  get size(): number {
    this.dropCancelled();
    return this.heap.length;
  }

  add(timer: Timer): void {
    this.live.add(TimerQueue.key(timer.runId, timer.timerId));
    this.heap.push({ ...timer, seq: this.seq++ });
    this.up(this.heap.length - 1);
  }

  remove(runId: string, timerId: string): void {
    this.live.delete(TimerQueue.key(runId, timerId));
  }

  peek(): Timer | undefined {
    this.dropCancelled();
    return this.heap[0];
  }

  pop(): Timer | undefined {
    this.dropCancelled();
    const top = this.heap[0];
    if (!top) return undefined;
    this.live.delete(TimerQueue.key(top.runId, top.timerId));
    this.removeTop();
    return top;
  }

  private dropCancelled(): void {
    while (
      this.heap.length > 0 &&
      !this.live.has(TimerQueue.key(this.heap[0]!.runId, this.heap[0]!.timerId))
    ) {
      this.removeTop();
    }
  }

  private removeTop(): void {
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}
