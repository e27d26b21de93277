import { RuntimeError, type ExecutionStatus, type HistoryFollowItem } from "../contract/index.js";
import { execOf } from "./execution-store.js";
import { EXECUTION_FIELDS, storedFields } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import { readHistoryEntries } from "../payloads/history-payloads.js";
import type { RedisClient } from "../store/redis.js";

/**
 * An execution's history as it is committed, for live clients
 * (`GET /v1/executions/:id/events`).
 *
 * The commit script writes the history list and the record's `hc` (event count)
 * together, so `hc` says exactly which events exist. A follower probes `hc` and
 * the status every `intervalMs`, reads only the events it has not seen, and ends
 * once the execution has ended and every event was sent. Probes of one execution
 * are shared by all its followers within half an interval, so a thousand viewers
 * of one execution cost about one small read per interval, not a thousand; the
 * commit path is not touched (no publish per transition).
 */
export class HistoryFeed {
  private readonly probes = new Map<string, { at: number; read: Promise<Probe | null> }>();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly intervalMs = 250,
  ) {}

  /**
   * Events with ids above `afterEventId` (0: all), then `{kind: "end"}` once the
   * execution has ended; stops early when `signal` aborts. Throws
   * ExecutionDoesNotExist before yielding anything for an unknown execution.
   */
  async *follow(
    executionId: string,
    afterEventId: number,
    signal: AbortSignal,
  ): AsyncGenerator<HistoryFollowItem> {
    const exec = execOf(executionId);
    let sent = Math.max(0, Math.floor(afterEventId));
    for (let first = true; !signal.aborted; first = false) {
      const probe = await this.probe(exec, first);
      if (!probe) {
        if (first) {
          throw new RuntimeError(
            "ExecutionDoesNotExist",
            `Execution '${executionId}' does not exist`,
          );
        }
        return; // purged while followed
      }
      while (sent < probe.count && !signal.aborted) {
        const to = Math.min(probe.count, sent + 500);
        const raw = await this.client.redis.lrangeBuffer(this.keys.history(exec), sent, to - 1);
        const entries = await readHistoryEntries(this.client, this.keys, exec, raw);
        const events = entries.map((entry) => entry.event);
        if (events.length === 0) break;
        sent += events.length;
        yield { kind: "events", events };
      }
      // The count was read with the status: an ended execution's count is final.
      if (probe.status !== "RUNNING" && sent >= probe.count) {
        yield { kind: "end", status: probe.status };
        return;
      }
      await sleep(this.intervalMs, signal);
    }
  }

  private probe(exec: string, fresh: boolean): Promise<Probe | null> {
    const now = Date.now();
    const shared = this.probes.get(exec);
    if (!fresh && shared && now - shared.at < this.intervalMs / 2) return shared.read;
    const read = this.client.redis
      .hmget(
        this.keys.execution(exec),
        ...storedFields(EXECUTION_FIELDS, ["historyCount", "status"]),
      )
      .then(([hc, st]) =>
        hc === null || st === null ? null : { count: Number(hc), status: st as ExecutionStatus },
      );
    this.probes.set(exec, { at: now, read });
    // Forget it once it is stale, so the map holds only executions being followed.
    setTimeout(() => {
      if (this.probes.get(exec)?.read === read) this.probes.delete(exec);
    }, this.intervalMs).unref();
    return read;
  }
}

interface Probe {
  count: number;
  status: ExecutionStatus;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
