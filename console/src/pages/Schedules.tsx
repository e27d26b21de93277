import { useEffect, useState } from "preact/hooks";
import { api, ApiError, seg } from "../api/client.js";
import { can } from "../api/me.js";
import type { Json, Me } from "../api/types.js";
import { JsonView } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, StatusBadge } from "../components/misc.js";
import { navigate, paths } from "../router.js";
import {
  isObject,
  itemsOf,
  num,
  obj,
  targetText,
  text,
  type JsonObject,
} from "../triggers/read.js";

const REFRESH_MS = 5000;

/**
 * Schedules (`GET /v1/schedules`): name, expression and time zone, target, state,
 * next tick and overlap policy. A table on wide screens, cards on a phone; the state
 * badge stays on each card's first line.
 */
export function SchedulesPage() {
  const [items, setItems] = useState<JsonObject[]>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let stopped = false;
    const load = async () => {
      try {
        const answer = await api.get<Json>("/v1/schedules");
        if (!stopped) {
          setItems(itemsOf(answer));
          setError(undefined);
        }
      } catch (err) {
        if (!stopped) setError(err);
      }
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  return (
    <>
      <h1>Schedules</h1>
      <ErrorNotice error={error} />
      {items === undefined ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : items.length === 0 ? (
        <p class="muted">
          No schedules. Create one with <code>POST /v1/schedules</code>.
        </p>
      ) : (
        <div class="list-box">
          <table aria-label="Schedules" class="cards schedules">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Expression</th>
                <th scope="col">Time zone</th>
                <th scope="col">Target</th>
                <th scope="col">Next tick</th>
                <th scope="col">Overlap</th>
              </tr>
            </thead>
            <tbody>
              {items.map((s) => {
                const name = text(s, "name") ?? "";
                const state = text(s, "state") ?? "?";
                return (
                  <tr key={name} data-schedule={name} data-state={state}>
                    <td class="cell-name">
                      <Link href={paths.schedule(name)}>{name}</Link>
                    </td>
                    <td class="cell-status">
                      <StatusBadge status={state} />
                    </td>
                    <td class="cell-expression" data-label="Expression">
                      <code>{text(s, "scheduleExpression")}</code>
                    </td>
                    <td data-label="Time zone">{text(s, "scheduleExpressionTimezone") ?? "UTC"}</td>
                    <td data-label="Target">{targetText(obj(s, "target"))}</td>
                    <td data-label="Next tick">
                      {state === "ENABLED" ? formatTime(text(s, "nextTick")) : "—"}
                    </td>
                    <td data-label="Overlap">{text(s, "overlapPolicy")}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** The writable fields of a schedule: what a PUT sends back with `state` changed. */
const WRITABLE = [
  "target",
  "scheduleExpression",
  "scheduleExpressionTimezone",
  "startDate",
  "endDate",
  "state",
  "overlapPolicy",
  "catchUpWindowSeconds",
  "description",
];

/** A datetime-local value (local time) as an ISO instant, or undefined. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** An instant as a datetime-local value (local time, minutes). */
function localOf(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/**
 * One schedule: its facts and definition JSON, Enable/Disable (PUT with the state
 * changed), Delete after a confirmation, and Backfill of a past range, listing the
 * executions the API started (or found started before).
 */
export function SchedulePage({ me, name }: { me: Me; name: string }) {
  const [schedule, setSchedule] = useState<JsonObject>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<string>();
  const path = `/v1/schedules/${seg(name)}`;
  const write = can(me, "definitions:write");

  useEffect(() => {
    setSchedule(undefined);
    api
      .get<Json>(path)
      .then(
        (s) => (isObject(s) ? setSchedule(s) : setError(new Error("Unexpected answer"))),
        setError,
      );
  }, [name]);

  const run = async (work: () => Promise<string | undefined>) => {
    setBusy(true);
    setError(undefined);
    try {
      const said = await work();
      if (said) setOutcome(said);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const toggle = () =>
    run(async () => {
      if (!schedule) return undefined;
      const body: JsonObject = {};
      for (const k of WRITABLE) if (schedule[k] !== undefined) body[k] = schedule[k]!;
      body.state = schedule.state === "ENABLED" ? "DISABLED" : "ENABLED";
      const next = await api.put<Json>(path, body);
      if (isObject(next)) setSchedule(next);
      return `The schedule is ${text(next, "state") ?? "changed"}.`;
    });

  const remove = () =>
    run(async () => {
      if (!confirm(`Delete the schedule ${name}? Its executions are kept.`)) return undefined;
      await api.delete(path);
      navigate(paths.schedules());
      return undefined;
    });

  if (!schedule) {
    return (
      <>
        <h1>Schedule {name}</h1>
        {error ? <ErrorNotice error={error} /> : <p class="muted">Loading…</p>}
        <p>
          <Link href={paths.schedules()}>All schedules</Link>
        </p>
      </>
    );
  }
  const state = text(schedule, "state") ?? "?";
  const skipped = num(schedule, "skippedCount") ?? 0;
  return (
    <>
      <p class="small">
        <Link href={paths.schedules()}>Schedules</Link> /
      </p>
      <h1 class="title-line">
        <span class="mono wrap">{name}</span> <StatusBadge status={state} />
      </h1>
      {write ? (
        <div class="actions-bar" aria-label="Actions">
          <div class="actions">
            <button type="button" disabled={busy} onClick={() => void toggle()}>
              {state === "ENABLED" ? "Disable" : "Enable"}
            </button>
            <button type="button" class="danger" disabled={busy} onClick={() => void remove()}>
              Delete
            </button>
          </div>
        </div>
      ) : null}
      {outcome ? (
        <p class="notice ok" role="status">
          {outcome}
        </p>
      ) : null}
      <ErrorNotice error={error} />
      <section class="card" aria-labelledby="schedule-facts">
        <h2 id="schedule-facts">Schedule</h2>
        <dl class="facts-list">
          <dt>Expression</dt>
          <dd class="mono wrap">{text(schedule, "scheduleExpression")}</dd>
          <dt>Time zone</dt>
          <dd>{text(schedule, "scheduleExpressionTimezone") ?? "UTC"}</dd>
          <dt>Target</dt>
          <dd>
            <Link href={paths.machine(text(obj(schedule, "target"), "stateMachine") ?? "")}>
              {targetText(obj(schedule, "target"))}
            </Link>
          </dd>
          <dt>Next tick</dt>
          <dd data-next-tick>
            {state === "ENABLED" ? formatTime(text(schedule, "nextTick")) : "—"}
          </dd>
          <dt>Last tick</dt>
          <dd>
            {formatTime(text(schedule, "lastTick"))}
            {text(schedule, "lastExecution") ? (
              <>
                {" "}
                <Link href={paths.execution(text(schedule, "lastExecution")!)}>execution</Link>
              </>
            ) : null}
          </dd>
          <dt>Overlap policy</dt>
          <dd>{text(schedule, "overlapPolicy")}</dd>
          <dt>Catch-up window</dt>
          <dd>{num(schedule, "catchUpWindowSeconds") ?? "—"} s</dd>
          <dt>Skipped ticks</dt>
          <dd>{skipped}</dd>
        </dl>
      </section>
      {can(me, "executions:write") ? <Backfill path={path} /> : null}
      <details class="card definition" open>
        <summary>
          <h2>Definition</h2>
        </summary>
        <JsonView value={schedule} label="Schedule definition" />
      </details>
    </>
  );
}

/** Backfill: every tick in [from, to) starts its execution; the answer is listed with links. */
function Backfill({ path }: { path: string }) {
  const now = Date.now();
  const [from, setFrom] = useState(localOf(now - 3_600_000));
  const [to, setTo] = useState(localOf(now));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [answer, setAnswer] = useState<JsonObject[]>();

  const submit = async (event: Event) => {
    event.preventDefault();
    const f = isoOf(from);
    const t = isoOf(to);
    if (!f || !t) {
      setError(new Error("Both From and To are needed."));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const body = await api.post<Json>(`${path}/backfill`, { from: f, to: t });
      const list = isObject(body) && Array.isArray(body.executions) ? body.executions : [];
      setAnswer(list.filter(isObject));
    } catch (err) {
      setError(err instanceof ApiError ? err : new Error(String(err)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card backfill" aria-labelledby="backfill">
      <h2 id="backfill">Backfill</h2>
      <p class="muted small">
        Starts the execution of every tick in [From, To), whatever the overlap policy; a tick
        started before is found, not started again. At most 1,000 ticks.
      </p>
      <form class="filters" onSubmit={(e) => void submit(e)}>
        <label>
          From
          <input
            type="datetime-local"
            name="from"
            value={from}
            onInput={(e) => setFrom((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          To
          <input
            type="datetime-local"
            name="to"
            value={to}
            onInput={(e) => setTo((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="clear" disabled={busy}>
          Backfill
        </button>
      </form>
      <ErrorNotice error={error} />
      {answer ? (
        <div class="backfill-answer" role="status">
          <p>
            {answer.length === 0
              ? "No tick in that range."
              : `${answer.filter((e) => e.created === true).length} started, ${
                  answer.filter((e) => e.created !== true).length
                } found started before.`}
          </p>
          <ul class="plain">
            {answer.map((e) => {
              const id = text(e, "executionId") ?? "";
              return (
                <li key={id} data-backfilled={id}>
                  {formatTime(text(e, "tick"))} →{" "}
                  <Link href={paths.execution(id)} class="mono wrap">
                    {id.split(":").pop() ?? id}
                  </Link>{" "}
                  <span class="muted small">{e.created === true ? "started" : "existed"}</span>
                </li>
              );
            })}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
