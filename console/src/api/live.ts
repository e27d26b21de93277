import { api, authHeaders, seg } from "./client.js";
import { sleep, subscribe, SseUnavailable } from "./sse.js";
import {
  isLive,
  type Approval,
  type ExecutionDetail,
  type HistoryEvent,
  type Page,
} from "./types.js";

/**
 * Live updates in one place: the SSE routes when the server has them, polling
 * otherwise (an older server, or a proxy that buffers streams). Pages only see
 * callbacks, so the transport can change here alone.
 */

const POLL_MS = 1000;

/** Every history event of an execution, from `after` on (pages of 1000). */
export async function fetchHistory(executionId: string): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let cursor: string | undefined;
  do {
    const page: Page<HistoryEvent> = await api.get(`/v1/executions/${seg(executionId)}/history`, {
      limit: 1000,
      cursor,
    });
    events.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return events;
}

export interface HistoryFollower {
  /** New events, in order (never one twice). */
  onEvents: (events: HistoryEvent[]) => void;
  /** The execution ended and every event was delivered. */
  onEnd: () => void;
}

/** Follows an execution's history until it ends or `signal` aborts. */
export async function followHistory(
  executionId: string,
  follower: HistoryFollower,
  signal: AbortSignal,
): Promise<void> {
  let last = 0;
  const deliver = (events: HistoryEvent[]) => {
    const fresh = events.filter((e) => e.id > last);
    if (fresh.length === 0) return;
    last = fresh[fresh.length - 1]!.id;
    follower.onEvents(fresh);
  };
  try {
    let batch: HistoryEvent[] = [];
    let flush: ReturnType<typeof setTimeout> | undefined;
    await subscribe({
      url: `/v1/executions/${seg(executionId)}/events`,
      headers: authHeaders(),
      signal,
      endEvent: "end",
      onMessage: (message) => {
        if (message.event === "history") {
          // Catching up on a long history sends thousands of events at once: hand
          // them over in batches rather than re-deriving the page per event.
          batch.push(JSON.parse(message.data) as HistoryEvent);
          flush ??= setTimeout(() => {
            flush = undefined;
            const events = batch;
            batch = [];
            deliver(events);
          }, 50);
        } else if (message.event === "end") {
          if (flush !== undefined) clearTimeout(flush);
          flush = undefined;
          deliver(batch);
          batch = [];
          follower.onEnd();
        }
      },
    });
    return;
  } catch (err) {
    if (!(err instanceof SseUnavailable) || err.status !== 404) throw err;
  }
  // Polling: the history in full while the execution runs (ids are positions).
  while (!signal.aborted) {
    const record = await api.get<ExecutionDetail>(`/v1/executions/${seg(executionId)}`);
    deliver(await fetchHistory(executionId));
    if (!isLive(record.status)) {
      follower.onEnd();
      return;
    }
    await sleep(POLL_MS, signal);
  }
}

export interface ApprovalChange {
  /** `approval.created`, `approval.decided`, `approval.expired`, `approval.cancelled`, … */
  event: string;
  approval: Approval;
}

/**
 * Calls `onChange` on every approval change the caller may read (`null`: something
 * may have changed, re-read). Falls back to a tick every 2 s without the stream.
 */
export async function followApprovals(
  onChange: (change: ApprovalChange | null) => void,
  signal: AbortSignal,
): Promise<void> {
  try {
    await subscribe({
      url: "/v1/approvals/events",
      headers: authHeaders(),
      signal,
      onMessage: (message) => {
        if (message.event === "approval") onChange(JSON.parse(message.data) as ApprovalChange);
      },
    });
    return;
  } catch (err) {
    if (!(err instanceof SseUnavailable) || err.status !== 404) throw err;
  }
  while (!signal.aborted) {
    await sleep(2000, signal);
    if (!signal.aborted) onChange(null);
  }
}
