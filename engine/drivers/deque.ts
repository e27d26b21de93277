/**
 * A FIFO that can also take an item at the front (a stop overtakes queued events),
 * all in O(1): a ring buffer of power-of-two capacity. The in-memory driver moves
 * every event through one, and a 2,000-item Map queues thousands at once. Slots
 * are cleared as items leave, so a delivered event is not kept alive by the queue.
 */
export class Deque<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(16).fill(undefined);
  private head = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    if (this.size === this.items.length) this.grow();
    this.items[(this.head + this.size) & (this.items.length - 1)] = item;
    this.size += 1;
  }

  unshift(item: T): void {
    if (this.size === this.items.length) this.grow();
    this.head = (this.head - 1) & (this.items.length - 1);
    this.items[this.head] = item;
    this.size += 1;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.size -= 1;
    return item;
  }

  private grow(): void {
    const old = this.items;
    const items = new Array<T | undefined>(old.length * 2).fill(undefined);
    for (let i = 0; i < this.size; i++) items[i] = old[(this.head + i) & (old.length - 1)];
    this.items = items;
    this.head = 0;
  }
}
