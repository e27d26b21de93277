import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, seg } from "../api/client.js";
import { followHistory } from "../api/live.js";
import { can } from "../api/me.js";
import {
  isLive,
  type Approval,
  type ExecutionDetail,
  type HistoryEvent,
  type Me,
  type Page,
  type StateMachineDetail,
} from "../api/types.js";
import { childExecutionOf } from "../components/child-execution.js";
import { DefinitionView } from "../components/Definition.js";
import { JsonView, parseMaybe } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import {
  ErrorNotice,
  Forbidden,
  formatDuration,
  formatTime,
  isForbidden,
  Section,
  StatusBadge,
  useNow,
} from "../components/misc.js";
import { Graph, Legend } from "../graph/Graph.js";
import { layoutGraph } from "../graph/layout.js";
import { definitionGraph } from "../graph/model.js";
import { navigate, paths } from "../router.js";
import {
  deriveHistory,
  detailsOf,
  type DerivedHistory,
  type StateEntry,
} from "../status/derive.js";
import { ExecutionActions, type Outcome } from "./ExecutionActions.js";
import { Timeline, type Order } from "./Timeline.js";

interface Selection {
  name: string;
  /** A particular entry (from the timeline or the picker); else the state's latest. */
  entryId?: number | undefined;
}

/** Every state definition by name, nested ones included (names are unique, as AWS wants). */
function stateDefinitions(definition: unknown): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const walk = (scope: unknown) => {
    const states = (scope as { States?: Record<string, Record<string, unknown>> })?.States ?? {};
    for (const [name, state] of Object.entries(states)) {
      out.set(name, state);
      if (Array.isArray(state.Branches)) state.Branches.forEach(walk);
      walk(state.ItemProcessor ?? state.Iterator);
    }
  };
  walk(definition);
  return out;
}

/** The value at a simple JSONPath (`$.a.b[0]`) of a JSON text, if any. */
function atPath(text: string | undefined, path: string): unknown {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  for (const part of path
    .replace(/^\$\.?/, "")
    .split(/\.|\[(\d+)\]/)
    .filter(Boolean)) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** When a Wait entry ends: from the state's Seconds/Timestamp (or their paths on its input). */
export function waitEnd(
  state: Record<string, unknown> | undefined,
  entry: StateEntry,
): number | undefined {
  if (!state || state.Type !== "Wait") return undefined;
  const entered = Date.parse(entry.enteredAt);
  const seconds =
    typeof state.Seconds === "number"
      ? state.Seconds
      : typeof state.SecondsPath === "string"
        ? atPath(entry.input, state.SecondsPath)
        : undefined;
  if (typeof seconds === "number") return entered + seconds * 1000;
  const stamp =
    typeof state.Timestamp === "string"
      ? state.Timestamp
      : typeof state.TimestampPath === "string"
        ? atPath(entry.input, state.TimestampPath)
        : undefined;
  if (typeof stamp === "string" && !Number.isNaN(Date.parse(stamp))) return Date.parse(stamp);
  return undefined;
}

/**
 * One execution: the graph coloured from the history (the path taken, the current
 * state centred), the history as a timeline (newest first, following live), the
 * selected state's input/output/error with its attempts and duration, what it waits
 * for, the definition, and the actions. Follows the execution live until it ends.
 */
export function ExecutionPage({ me, id }: { me: Me; id: string }) {
  const [record, setRecord] = useState<ExecutionDetail>();
  const [machine, setMachine] = useState<StateMachineDetail>();
  const [events, setEvents] = useState<HistoryEvent[]>([]);
  const [approvals, setApprovals] = useState<Approval[]>([]);
  const [chosen, setChosen] = useState<Selection>();
  const [order, setOrder] = useState<Order>("newest");
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState<unknown>();
  const [forbidden, setForbidden] = useState(false);
  const [outcome, setOutcome] = useState<Outcome>();
  /** Bumped to read everything afresh (after a redrive the history goes on). */
  const [generation, setGeneration] = useState(0);
  const refresh = useRef<() => void>(() => undefined);

  useEffect(() => {
    setRecord(undefined);
    setEvents([]);
    setError(undefined);
    setForbidden(false);
    if (generation === 0) {
      setMachine(undefined);
      setChosen(undefined);
      setOutcome(undefined);
      setFollow(true);
    }
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let machineKey = "";
    /** A 403 ends everything the page was loading: said once, nothing retried. */
    const fail = (err: unknown) => {
      if (controller.signal.aborted) return;
      if (isForbidden(err)) {
        setForbidden(true);
        controller.abort();
      } else setError(err);
    };
    const loadRecord = async () => {
      try {
        const next = await api.get<ExecutionDetail>(`/v1/executions/${seg(id)}`);
        if (controller.signal.aborted) return;
        setRecord(next);
        const key = `${next.stateMachine}@${next.version}`;
        if (key !== machineKey && can(me, "definitions:read")) {
          machineKey = key;
          api
            .get<StateMachineDetail>(`/v1/state-machines/${seg(next.stateMachine)}`, {
              version: next.version,
            })
            .then((m) => {
              if (!controller.signal.aborted) setMachine(m);
            }, setError);
        }
        if (can(me, "approvals:read")) {
          const page = await api.get<Page<Approval>>("/v1/approvals", {
            stateMachine: next.stateMachine,
            limit: 1000,
          });
          if (!controller.signal.aborted)
            setApprovals(page.items.filter((a) => a.executionId === id));
        }
      } catch (err) {
        fail(err);
      }
    };
    // The record (status, pending tasks) is re-read after history arrives, once per burst.
    refresh.current = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        void loadRecord();
      }, 300);
    };
    if (!can(me, "executions:read")) {
      setForbidden(true);
      return;
    }
    void loadRecord();
    followHistory(
      id,
      {
        onEvents: (fresh) => {
          setEvents((prev) => [...prev, ...fresh]);
          refresh.current();
        },
        onEnd: () => refresh.current(),
      },
      controller.signal,
    ).catch(fail);
    return () => {
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [id, generation]);

  const derived = useMemo(() => deriveHistory(events), [events]);
  const layout = useMemo(
    () => (machine ? layoutGraph(definitionGraph(machine.definition)) : undefined),
    [machine],
  );
  const definitions = useMemo(
    () => (machine ? stateDefinitions(machine.definition) : new Map()),
    [machine],
  );

  // What is shown: the user's choice, else (following) the state running now or the one that failed.
  const failedEntry = useMemo(() => {
    for (const entry of [...derived.entries.values()].reverse())
      if (entry.status === "failed") return entry;
    return undefined;
  }, [derived]);
  const automatic = derived.current ?? failedEntry;
  const selection: Selection | undefined =
    chosen ?? (automatic ? { name: automatic.name, entryId: automatic.enteredEventId } : undefined);

  if (forbidden) {
    return (
      <>
        <h1>
          Execution <span class="mono wrap">{id}</span>
        </h1>
        <Forbidden me={me} need="executions:read" what="read executions" />
      </>
    );
  }

  const mayWrite = can(me, "executions:write");
  const running = record !== undefined && isLive(record.status);

  return (
    <>
      <h1>
        Execution <span class="mono wrap">{record?.name ?? id}</span>{" "}
        {record ? <StatusBadge status={record.status} /> : null}
      </h1>
      <ErrorNotice error={error} />
      {record ? (
        <div class="facts">
          <span>
            State machine{" "}
            <Link href={paths.machine(record.stateMachine, record.version)}>
              {record.stateMachine}
            </Link>{" "}
            v{record.version}
            {record.alias ? ` (alias ${record.alias})` : ""}
          </span>
          <span>Started {formatTime(record.startedAt)}</span>
          {record.stoppedAt ? <span>Stopped {formatTime(record.stoppedAt)}</span> : null}
          <Elapsed record={record} />
          {record.parentExecution ? (
            <span data-parent-execution={record.parentExecution}>
              Started by{" "}
              <Link href={paths.execution(record.parentExecution)} class="mono">
                {shortExecution(record.parentExecution)}
              </Link>
            </span>
          ) : null}
          {record.restartedFrom ? (
            <span>
              Restarted from <Link href={paths.execution(record.restartedFrom)}>the original</Link>
            </span>
          ) : null}
          {record.forkedFrom ? (
            <span>
              Forked from{" "}
              <Link href={paths.execution(record.forkedFrom.executionId)}>
                event {record.forkedFrom.eventId}
              </Link>
            </span>
          ) : null}
        </div>
      ) : null}
      {record && mayWrite ? (
        <ExecutionActions
          record={record}
          outcome={outcome}
          onOutcome={setOutcome}
          onRecord={(next) => {
            setRecord((prev) => ({ ...next, pendingTasks: prev?.pendingTasks ?? [] }));
            refresh.current();
          }}
          onRedriven={() => setGeneration((n) => n + 1)}
        />
      ) : null}
      {record?.status === "PAUSED" && record.pause ? (
        <p class="notice">
          Paused{record.pause.by ? ` by ${record.pause.by}` : ""} at {formatTime(record.pause.at)}
          {record.pause.reason ? `: ${record.pause.reason}` : ""}. Nothing advances until it is
          resumed.
        </p>
      ) : null}
      {record && (record.error || record.cause) ? (
        <p class="notice error">
          <strong>{record.error}</strong> {record.cause}
        </p>
      ) : null}
      <div class="split">
        <section class="card graph-card" aria-labelledby="exec-graph-title">
          <h2 id="exec-graph-title">Graph</h2>
          {layout ? (
            <Graph
              layout={layout}
              statuses={derived.states}
              taken={derived.taken}
              selected={selection?.name}
              focus={running ? derived.current?.name : undefined}
              onSelect={(name) => setChosen({ name })}
            />
          ) : !can(me, "definitions:read") ? (
            <Forbidden
              me={me}
              need="definitions:read"
              what="read state machines, so no graph is drawn"
            />
          ) : (
            <p class="muted">Loading the definition…</p>
          )}
          <details class="legend-box">
            <summary class="small">Legend</summary>
            <Legend />
          </details>
        </section>
        <div class="side">
          <StateDetail
            derived={derived}
            events={events}
            selection={selection}
            definitions={definitions}
            automatic={chosen === undefined}
            onPick={(entryId) => selection && setChosen({ name: selection.name, entryId })}
            onChoose={(name) => setChosen({ name })}
          />
          {record && record.pendingTasks.length > 0 ? (
            <PendingTasks record={record} approvals={approvals} />
          ) : null}
          {approvals.length > 0 ? <ExecutionApprovals approvals={approvals} /> : null}
        </div>
      </div>
      <Timeline
        events={events}
        derived={derived}
        onSelect={(name, entryId) => setChosen({ name, entryId })}
        selectedEntry={selection?.entryId}
        order={order}
        onOrder={setOrder}
        follow={follow}
        onFollow={(on) => {
          setFollow(on);
          if (on) setChosen(undefined);
        }}
        live={running}
        onFork={
          mayWrite && record ? (event) => void forkFrom(record, event, setOutcome) : undefined
        }
      />
      {record ? (
        <div class="split even">
          <Section title="Execution input" id="exec-input">
            <JsonView value={record.input} />
          </Section>
          <Section title="Execution output" id="exec-output">
            <JsonView value={record.output} />
          </Section>
        </div>
      ) : null}
      {machine ? <DefinitionView machine={machine} /> : null}
    </>
  );
}

/** Fork: a new execution from a state's entry; the page moves to it. */
async function forkFrom(
  record: ExecutionDetail,
  event: HistoryEvent,
  setOutcome: (outcome: Outcome) => void,
): Promise<void> {
  const name = detailsOf(event).name;
  if (
    !confirm(
      `Fork a new execution from event ${event.id}${typeof name === "string" ? ` (${name} entered)` : ""}? The new execution starts there with the same input and variables; this one is not touched.`,
    )
  )
    return;
  try {
    const answer = await api.post<{ executionId: string }>(
      `/v1/executions/${seg(record.executionId)}/fork`,
      { fromEventId: event.id },
    );
    navigate(paths.execution(answer.executionId));
  } catch (err) {
    setOutcome({ action: "Fork", error: err });
  }
}

/** An execution ARN as `<state machine>:<name>` (the part after `:execution:`). */
function shortExecution(arn: string): string {
  const at = arn.indexOf(":execution:");
  return at < 0 ? arn : arn.slice(at + ":execution:".length);
}

function Elapsed({ record }: { record: ExecutionDetail }) {
  const now = useNow(1000);
  const end = record.stoppedAt ? Date.parse(record.stoppedAt) : now;
  return <span>Duration {formatDuration(end - Date.parse(record.startedAt))}</span>;
}

function Countdown({ until, label }: { until: number; label: string }) {
  const now = useNow(1000);
  const left = until - now;
  return (
    <p class="countdown" data-countdown={new Date(until).toISOString()}>
      {label} {formatTime(new Date(until).toISOString())}{" "}
      <strong>{left > 0 ? `in ${formatDuration(left)}` : "now"}</strong>
    </p>
  );
}

function StateDetail({
  derived,
  events,
  selection,
  definitions,
  automatic,
  onPick,
  onChoose,
}: {
  derived: DerivedHistory;
  events: readonly HistoryEvent[];
  selection: Selection | undefined;
  definitions: Map<string, Record<string, unknown>>;
  automatic: boolean;
  onPick: (entryId: number) => void;
  onChoose: (name: string) => void;
}) {
  const now = useNow(1000);
  if (!selection) {
    return (
      <Section title="State" id="state-detail">
        <p class="muted">
          Choose a state in the graph or the timeline to see its input and output.
        </p>
      </Section>
    );
  }
  const summary = derived.states.get(selection.name);
  const entry =
    (selection.entryId !== undefined ? derived.entries.get(selection.entryId) : undefined) ??
    summary?.entries[summary.entries.length - 1];
  const state = definitions.get(selection.name);
  const end = entry && entry.status === "running" ? waitEnd(state, entry) : undefined;
  const child = entry
    ? childExecutionOf(events, derived.entryOfEvent, entry.enteredEventId)
    : undefined;
  const duration =
    entry &&
    (entry.exitedAt ? Date.parse(entry.exitedAt) : entry.status === "running" ? now : undefined);
  return (
    <section class="card" aria-labelledby="state-detail" data-detail-state={selection.name}>
      <h2 id="state-detail">
        State <span class="mono">{selection.name}</span>
        {automatic ? (
          <span class="muted small">
            {entry?.status === "running" ? " (current)" : " (where it failed)"}
          </span>
        ) : null}
      </h2>
      {!entry || !summary ? (
        <p class="muted">Not reached.</p>
      ) : (
        <>
          <p>
            <StatusBadge status={entry.status} />{" "}
            {summary.entries.length > 1
              ? `entry ${summary.entries.indexOf(entry) + 1} of ${summary.entries.length}`
              : null}
            {entry.attempt > 1 ? ` · attempt ${entry.attempt}` : null}
            {entry.retries > 0 ? ` · retried ${entry.retries}×` : null}
            {duration !== undefined
              ? ` · ${formatDuration(duration - Date.parse(entry.enteredAt))}${entry.exitedAt ? "" : " so far"}`
              : null}
          </p>
          {summary.entries.length > 1 ? (
            <label class="picker">
              {entry.within === "Map" ? "Map iteration" : "Entry"}
              <select
                value={String(entry.enteredEventId)}
                onChange={(e) => onPick(Number((e.target as HTMLSelectElement).value))}
              >
                {summary.entries.map((e, i) => (
                  <option key={e.enteredEventId} value={String(e.enteredEventId)}>
                    {e.within === "Map" ? "iteration" : "entry"} {i + 1} of {summary.entries.length}{" "}
                    · {e.status}
                    {e.attempt > 1 ? ` · attempt ${e.attempt}` : ""}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          {state && Array.isArray(state.Branches) ? (
            <BranchPicker branches={state.Branches} derived={derived} onChoose={onChoose} />
          ) : null}
          {end !== undefined ? <Countdown until={end} label="Waits until" /> : null}
          {child !== undefined ? (
            <p data-child-execution={child}>
              <Link href={paths.execution(child)}>Child execution</Link>{" "}
              <span class="mono small wrap">{shortExecution(child)}</span>
            </p>
          ) : null}
          {entry.failures.length > 0 ? (
            <>
              <h3>Attempts that failed</h3>
              <ul class="plain attempts">
                {entry.failures.map((f) => (
                  <li key={f.eventId}>
                    attempt {f.attempt}: <span class="mono">{f.error ?? "—"}</span>
                    {f.cause ? <span class="muted small"> {f.cause.slice(0, 300)}</span> : null}
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          <h3>Input</h3>
          <JsonView value={parseMaybe(entry.input)} label="Input" />
          <h3>Output</h3>
          <JsonView value={parseMaybe(entry.output)} label="Output" />
          {entry.error !== undefined || entry.cause !== undefined ? (
            <>
              <h3>Error</h3>
              <p class="mono">{entry.error ?? "—"}</p>
              <h3>Cause</h3>
              <JsonView value={parseMaybe(entry.cause)} label="Cause" />
            </>
          ) : null}
        </>
      )}
    </section>
  );
}

/**
 * A Parallel's branches: choosing one shows the state it is at (its latest entry),
 * or its first state if it has not started.
 */
function BranchPicker({
  branches,
  derived,
  onChoose,
}: {
  branches: unknown[];
  derived: DerivedHistory;
  onChoose: (name: string) => void;
}) {
  const options = branches.map((branch, i) => {
    const b = branch as { StartAt?: string; States?: Record<string, unknown> };
    let latest: StateEntry | undefined;
    for (const name of Object.keys(b.States ?? {})) {
      for (const entry of derived.states.get(name)?.entries ?? [])
        if (!latest || entry.enteredEventId > latest.enteredEventId) latest = entry;
    }
    const name = latest?.name ?? b.StartAt ?? "";
    return { label: `Branch ${i + 1}: ${name}${latest ? ` (${latest.status})` : ""}`, name };
  });
  return (
    <label class="picker">
      Branch
      <select
        value=""
        onChange={(e) => {
          const name = (e.target as HTMLSelectElement).value;
          if (name) onChoose(name);
        }}
      >
        <option value="">Show a branch…</option>
        {options.map((o, i) => (
          <option key={i} value={o.name}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

function PendingTasks({ record, approvals }: { record: ExecutionDetail; approvals: Approval[] }) {
  return (
    <Section title="Waiting for" id="pending-title">
      <ul class="plain">
        {record.pendingTasks.map((task, i) => {
          const approval = approvals.find((a) => a.approvalId === task.approvalId);
          return (
            <li key={i} class="pending-task">
              <strong>{task.stateName}</strong> <span class="mono small">{task.resource}</span>
              <br />
              <span class="muted">since {formatTime(task.scheduledAt)}</span>
              {task.timeoutAt ? (
                <Countdown until={Date.parse(task.timeoutAt)} label="Times out" />
              ) : null}
              {task.approvalId ? (
                <div>
                  Approval{approval ? `: ${approval.subject}` : ""} —{" "}
                  <Link href={paths.approvals()}>open the inbox</Link>
                </div>
              ) : null}
            </li>
          );
        })}
      </ul>
    </Section>
  );
}

function ExecutionApprovals({ approvals }: { approvals: Approval[] }) {
  return (
    <Section title="Approvals" id="exec-approvals">
      <ul class="plain">
        {approvals.map((a) => (
          <li key={a.approvalId}>
            <StatusBadge status={a.status} /> {a.subject}
            {a.decisions.map((d) => (
              <div key={d.approver} class="muted small">
                {d.decision} by {d.approver}
                {d.comment ? `: “${d.comment}”` : ""}
              </div>
            ))}
          </li>
        ))}
      </ul>
    </Section>
  );
}
