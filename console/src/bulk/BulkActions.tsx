import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client.js";
import type { ExecutionSummary, OperationRecord, Page } from "../api/types.js";
import { errorText, formatTime, TextField } from "../components/misc.js";
import {
  bulkActions,
  bulkFilter,
  countText,
  describeFilter,
  listQuery,
  progressOf,
  VERB,
  type BulkAction,
  type ExecutionQuery,
  type ListFilters,
} from "./filters.js";

/**
 * The bar's counts are re-read this often (a page of up to 1,000 rows per status
 * acted on: more than the list's 50, so less often), and at once when an operation ends.
 */
const COUNT_EVERY_MS = 10_000;
/**
 * An operation's progress is read soon after it starts (a small one is over in
 * moments), then less and less often, up to once a second.
 */
const progressDelay = (reads: number) => Math.min(1000, 100 * 2 ** reads);
const COUNT_PAGE = 1000;

interface Count {
  count: number;
  /** Counting stopped at its cap: there are more. */
  more: boolean;
}

/** Matching executions, a page of 1,000 at a time, up to `pages` pages. */
async function countMatching(query: ExecutionQuery, pages: number): Promise<Count> {
  let count = 0;
  let cursor: string | undefined;
  for (let i = 0; i < pages; i++) {
    const page = await api.get<Page<ExecutionSummary>>("/v1/executions", {
      ...query,
      cursor,
      limit: COUNT_PAGE,
    });
    count += page.items.length;
    cursor = page.nextCursor;
    if (!cursor) return { count, more: false };
  }
  return { count, more: true };
}

type Phase =
  | { kind: "idle" }
  | {
      kind: "confirm";
      action: BulkAction;
      filter: ExecutionQuery;
      count?: Count;
      /** The request is on its way: a second click must not start a second operation. */
      sending?: boolean;
      error?: unknown;
    }
  | {
      kind: "running";
      action: BulkAction;
      expected: number;
      op: OperationRecord;
      /** Progress reads so far (they space out). */
      reads: number;
      error?: unknown;
    };

/**
 * Bulk Stop, Pause and Resume over what the executions list shows: a bar with the
 * number each would touch, a confirmation that states the filter and the count,
 * then the operation's progress (`GET /v1/operations/:id`) until it ends.
 * The filter sent is the list's own (filters.ts `bulkFilter`), bounded at the
 * moment of confirmation, so the count shown and the executions changed agree.
 */
export function BulkActions(props: { filters: ListFilters; onChanged: () => void }) {
  const { filters } = props;
  const actions = bulkActions(filters);
  const { q, stateMachine, status, error, since, from, to } = filters;
  const key = JSON.stringify([q, stateMachine, status, error, since, from, to]);
  // The counts with the filters they were made for: another view's are never shown.
  const [counted, setCounted] = useState<{
    key: string;
    counts: Partial<Record<BulkAction, Count>>;
  }>();
  const [phase, setPhase] = useState<Phase>({ kind: "idle" });
  const [stopError, setStopError] = useState("");
  const [stopCause, setStopCause] = useState("");
  const [reason, setReason] = useState("");
  // Bumped when an operation ends: the counts are read again at once.
  const [recount, setRecount] = useState(0);
  const onChanged = useRef(props.onChanged);
  onChanged.current = props.onChanged;
  // The confirmation takes the focus when it opens (a keyboard user is taken to it).
  const dialog = useRef<HTMLDivElement>(null);
  const confirmOpen = phase.kind === "confirm";
  useEffect(() => {
    if (confirmOpen) dialog.current?.focus();
  }, [confirmOpen]);

  // The bar's counts: one listing per status acted on (RUNNING, PAUSED), capped.
  useEffect(() => {
    let stopped = false;
    if (actions.length === 0) return undefined;
    const load = async () => {
      const now = Date.now();
      const next: Partial<Record<BulkAction, Count>> = {};
      const byStatus = new Map<string, Promise<Count>>();
      for (const action of actions) {
        const filter = bulkFilter(action, filters, now);
        const status = filter.status!;
        if (!byStatus.has(status)) byStatus.set(status, countMatching(filter, 1));
      }
      try {
        for (const action of actions) {
          next[action] = await byStatus.get(bulkFilter(action, filters, now).status!)!;
        }
        if (!stopped) setCounted({ key, counts: next });
      } catch {
        /* the list shows the API's error; the bar just waits for the next try */
      }
    };
    void load();
    const timer = setInterval(() => void load(), COUNT_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [key, recount]);

  // A confirmation counts exactly what it will send (up to 10,000).
  const confirming = phase.kind === "confirm" ? phase : undefined;
  useEffect(() => {
    if (!confirming || confirming.count) return undefined;
    let stopped = false;
    countMatching(confirming.filter, 10).then(
      (count) => !stopped && setPhase({ ...confirming, count }),
      (error: unknown) => !stopped && setPhase({ ...confirming, error }),
    );
    return () => {
      stopped = true;
    };
  }, [confirming?.action, confirming?.filter]);

  // A running operation's progress, until it ends.
  const running = phase.kind === "running" && phase.op.status === "RUNNING" ? phase : undefined;
  useEffect(() => {
    if (!running) return undefined;
    const timer = setTimeout(() => {
      api.get<OperationRecord>(`/v1/operations/${running.op.operationId}`).then(
        (op) => {
          setPhase({ ...running, op, reads: running.reads + 1 });
          if (op.status !== "RUNNING") {
            setRecount((n) => n + 1);
            onChanged.current();
          }
        },
        (error: unknown) => setPhase({ ...running, error, reads: running.reads + 1 }),
      );
    }, progressDelay(running.reads));
    return () => clearTimeout(timer);
  }, [running]);

  const ask = (action: BulkAction) =>
    setPhase({ kind: "confirm", action, filter: bulkFilter(action, filters, Date.now()) });

  const go = async (c: NonNullable<typeof confirming>) => {
    const options: Record<string, string> = {};
    if (c.action === "stop" && stopError.trim()) options.error = stopError.trim();
    if (c.action === "stop" && stopCause.trim()) options.cause = stopCause.trim();
    if (c.action === "pause" && reason.trim()) options.reason = reason.trim();
    setPhase({ ...c, sending: true });
    try {
      const op = await api.post<OperationRecord>(`/v1/executions/${c.action}`, {
        ...c.filter,
        ...options,
      });
      setPhase({ kind: "running", action: c.action, expected: c.count?.count ?? 0, op, reads: 0 });
    } catch (error) {
      setPhase({ ...c, error });
    }
  };

  if (actions.length === 0 && phase.kind === "idle") return null;
  const statusWord = (action: BulkAction) =>
    (filters.status || (action === "resume" ? "PAUSED" : "RUNNING")).toLowerCase();

  return (
    <section class="bulk" aria-label="Bulk actions">
      {phase.kind === "idle" ? (
        <div class="bulk-bar">
          <span class="muted small">Every matching execution:</span>
          {actions.map((action) => {
            const count = counted?.key === key ? counted.counts[action] : undefined;
            return (
              <button
                key={action}
                type="button"
                class={action === "stop" ? "small danger" : "small"}
                disabled={count?.count === 0}
                data-bulk={action}
                data-count={count ? count.count : undefined}
                onClick={() => ask(action)}
              >
                {VERB[action].label} {count ? countText(count.count, count.more) : "…"}{" "}
                {statusWord(action)} matching…
              </button>
            );
          })}
        </div>
      ) : phase.kind === "confirm" ? (
        <div
          class="bulk-confirm card"
          role="alertdialog"
          aria-labelledby="bulk-confirm-title"
          data-confirm={phase.action}
          ref={dialog}
          tabIndex={-1}
          onKeyDown={(e) => {
            if (e.key === "Escape") setPhase({ kind: "idle" });
          }}
        >
          <h2 id="bulk-confirm-title">
            {VERB[phase.action].label}{" "}
            {phase.count ? countText(phase.count.count, phase.count.more) : "…"} executions?
          </h2>
          <p data-filter>Every execution with {describeFilter(phase.filter, formatTime)}.</p>
          <p class="muted small">
            {phase.action === "stop"
              ? "They end as ABORTED. "
              : phase.action === "pause"
                ? "Each stands still where it is until resumed; running tasks finish. "
                : "Each goes on with what arrived while it was paused. "}
            Executions started after this confirmation are not touched.
          </p>
          {phase.action === "stop" ? (
            <div class="action-fields">
              <TextField
                label="Stop error"
                value={stopError}
                placeholder="Operator.Stopped"
                onValue={setStopError}
              />
              <TextField label="Stop cause" value={stopCause} onValue={setStopCause} />
            </div>
          ) : phase.action === "pause" ? (
            <div class="action-fields">
              <TextField label="Pause reason" value={reason} onValue={setReason} />
            </div>
          ) : null}
          {phase.error !== undefined ? <Refused error={phase.error} /> : null}
          <div class="actions">
            <button
              type="button"
              class={phase.action === "stop" ? "danger" : ""}
              disabled={!phase.count || phase.count.count === 0 || phase.sending === true}
              onClick={() => void go(phase)}
            >
              {VERB[phase.action].label}{" "}
              {phase.count ? countText(phase.count.count, phase.count.more) : "…"} executions
            </button>
            <button type="button" onClick={() => setPhase({ kind: "idle" })}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <Progress phase={phase} onClose={() => setPhase({ kind: "idle" })} />
      )}
    </section>
  );
}

function Progress(props: { phase: Extract<Phase, { kind: "running" }>; onClose: () => void }) {
  const { action, op, expected, error } = props.phase;
  const { settled, fraction, finished } = progressOf(op, expected);
  const counts = `${op.done} done, ${op.skipped} skipped, ${op.failed} failed`;
  return (
    <div
      class="bulk-progress card"
      data-operation={op.operationId}
      data-operation-status={op.status}
      data-done={op.done}
      data-failed={op.failed}
    >
      <progress max={1} value={fraction} aria-label={`${VERB[action].label} progress`} />
      <p role="status">
        {finished
          ? `${VERB[action].label} ${op.status === "SUCCEEDED" ? "finished" : "FAILED"}: ${counts} (of ${op.matched} matched).`
          : `${VERB[action].doing}… ${settled} of ${Math.max(expected, op.matched)}: ${counts}.`}
      </p>
      {op.errors.length > 0 ? (
        <ul class="small bulk-errors">
          {op.errors.map((e, i) => (
            <li key={i}>
              <span class="mono">{e.executionId || "operation"}</span> — {e.error}: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
      {error !== undefined ? <Refused error={error} /> : null}
      {finished ? (
        <button type="button" class="small" onClick={props.onClose}>
          Close
        </button>
      ) : null}
    </div>
  );
}

function Refused({ error }: { error: unknown }) {
  const text = errorText(error);
  return (
    <p class="notice error" role="alert">
      Refused — {text}
    </p>
  );
}
