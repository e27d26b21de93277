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
import { JsonView, parseMaybe } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, Section, StatusBadge } from "../components/misc.js";
import { Graph, Legend } from "../graph/Graph.js";
import { layoutGraph } from "../graph/layout.js";
import { definitionGraph } from "../graph/model.js";
import { paths } from "../router.js";
import { deriveHistory, type DerivedHistory } from "../status/derive.js";
import { Timeline } from "./Timeline.js";

interface Selection {
  name: string;
  /** A particular entry (from the timeline); else the state's latest. */
  entryId?: number;
}

/**
 * One execution: the graph coloured from the history, the history as a timeline,
 * the selected state's input/output/error, what it waits for, and Stop. Follows
 * the execution live until it ends.
 */
export function ExecutionPage({ me, id }: { me: Me; id: string }) {
  const [record, setRecord] = useState<ExecutionDetail>();
  const [machine, setMachine] = useState<StateMachineDetail>();
  const [events, setEvents] = useState<HistoryEvent[]>([]);
  const [approvals, setApprovals] = useState<Approval[]>([]);
  const [selection, setSelection] = useState<Selection>();
  const [error, setError] = useState<unknown>();
  const refresh = useRef<() => void>(() => undefined);

  useEffect(() => {
    setRecord(undefined);
    setEvents([]);
    setSelection(undefined);
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let machineKey = "";
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
            .then(setMachine, setError);
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
        if (!controller.signal.aborted) setError(err);
      }
    };
    // The record (status, pending tasks) is re-read after history arrives, once per burst.
    refresh.current = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        void loadRecord();
      }, 300);
    };
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
    ).catch((err: unknown) => {
      if (!controller.signal.aborted) setError(err);
    });
    return () => {
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [id]);

  const derived = useMemo(() => deriveHistory(events), [events]);
  const layout = useMemo(
    () => (machine ? layoutGraph(definitionGraph(machine.definition)) : undefined),
    [machine],
  );

  /** Stop, Pause, Resume; the stream brings their events. */
  const act = async (action: "stop" | "pause" | "resume") => {
    if (action === "stop" && !confirm("Stop this execution? It ends as ABORTED.")) return;
    try {
      // The answer is the record without `pendingTasks`: keep the last ones until the re-read.
      const next = await api.post<ExecutionDetail>(`/v1/executions/${seg(id)}/${action}`, {});
      setRecord((prev) => ({ ...next, pendingTasks: prev?.pendingTasks ?? [] }));
      refresh.current();
    } catch (err) {
      setError(err);
    }
  };
  const mayWrite = record !== undefined && isLive(record.status) && can(me, "executions:write");
  const mayRedrive =
    record !== undefined &&
    ["FAILED", "TIMED_OUT", "ABORTED"].includes(record.status) &&
    can(me, "executions:write");
  /** Redrive: the execution runs again in place; the page follows it afresh. */
  const redrive = async () => {
    try {
      await api.post(`/v1/executions/${seg(id)}/redrive`, {});
      window.location.reload();
    } catch (err) {
      setError(err);
    }
  };

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
          </span>
          <span>Started {formatTime(record.startedAt)}</span>
          {record.stoppedAt ? <span>Stopped {formatTime(record.stoppedAt)}</span> : null}
          {mayWrite ? (
            <span class="actions">
              {record.status === "PAUSED" ? (
                <button type="button" onClick={() => void act("resume")}>
                  Resume
                </button>
              ) : (
                <button type="button" onClick={() => void act("pause")}>
                  Pause
                </button>
              )}
              <button type="button" class="danger" onClick={() => void act("stop")}>
                Stop
              </button>
            </span>
          ) : null}
          {mayRedrive ? (
            <span class="actions">
              <button type="button" onClick={() => void redrive()}>
                Redrive
              </button>
            </span>
          ) : null}
        </div>
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
          <Legend />
          {layout ? (
            <Graph
              layout={layout}
              statuses={derived.states}
              selected={selection?.name}
              onSelect={(name) => setSelection({ name })}
            />
          ) : (
            <p class="muted">Loading the definition…</p>
          )}
        </section>
        <div class="side">
          <StateDetail derived={derived} selection={selection} />
          {record && record.pendingTasks.length > 0 ? (
            <PendingTasks record={record} approvals={approvals} />
          ) : null}
          {approvals.length > 0 ? <ExecutionApprovals approvals={approvals} /> : null}
        </div>
      </div>
      <Timeline
        events={events}
        derived={derived}
        onSelect={(name, entryId) => setSelection({ name, entryId })}
        selectedEntry={selection?.entryId}
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
    </>
  );
}

function StateDetail({ derived, selection }: { derived: DerivedHistory; selection?: Selection }) {
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
  return (
    <section class="card" aria-labelledby="state-detail" data-detail-state={selection.name}>
      <h2 id="state-detail">
        State <span class="mono">{selection.name}</span>
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
            {entry.retries > 0 ? ` · retried ${entry.retries}×` : null}
          </p>
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
              <span class="muted">
                since {formatTime(task.scheduledAt)}
                {task.timeoutAt ? `, times out ${formatTime(task.timeoutAt)}` : ""}
              </span>
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
