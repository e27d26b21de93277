import { useState } from "preact/hooks";
import { api, ApiError, seg } from "../api/client.js";
import { can } from "../api/me.js";
import type { List, Me, Schedule, ScheduleBackfill } from "../api/types.js";
import { JsonView } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, StatusBadge } from "../components/misc.js";
import { paths } from "../router.js";
import { targetText } from "../triggers/format.js";
import { deleteThenLeave, ListTable, NotYet, useNamed, usePolled } from "../triggers/resource.js";

const REFRESH_MS = 5000;

/**
 * Schedules (`GET /v1/schedules`): name, expression and time zone, target, state,
 * next tick and overlap policy. A table on wide screens, cards on a phone; the state
 * badge stays on each card's first line.
 */
export function SchedulesPage() {
  const { value, error } = usePolled(() => api.get<List<Schedule>>("/v1/schedules"), REFRESH_MS);
  return (
    <>
      <h1>Schedules</h1>
      <ListTable
        items={value?.items}
        error={error}
        empty={
          <>
            No schedules. Create one with <code>POST /v1/schedules</code>.
          </>
        }
        label="Schedules"
        class="schedules"
        columns={["Name", "State", "Expression", "Time zone", "Target", "Next tick", "Overlap"]}
        row={(s) => (
          <tr key={s.name} data-schedule={s.name} data-state={s.state}>
            <td class="cell-name">
              <Link href={paths.schedule(s.name)}>{s.name}</Link>
            </td>
            <td class="cell-status">
              <StatusBadge status={s.state} />
            </td>
            <td class="cell-expression" data-label="Expression">
              <code>{s.scheduleExpression}</code>
            </td>
            <td data-label="Time zone">{s.scheduleExpressionTimezone}</td>
            <td data-label="Target">{targetText(s.target)}</td>
            <td data-label="Next tick">{s.state === "ENABLED" ? formatTime(s.nextTick) : "—"}</td>
            <td data-label="Overlap">{s.overlapPolicy}</td>
          </tr>
        )}
      />
    </>
  );
}

/** A schedule's writable fields: what a PUT sends back, its state flipped. */
function toggled(s: Schedule) {
  const { target, scheduleExpression, scheduleExpressionTimezone, overlapPolicy } = s;
  return {
    target,
    scheduleExpression,
    scheduleExpressionTimezone,
    overlapPolicy,
    catchUpWindowSeconds: s.catchUpWindowSeconds,
    ...(s.startDate !== undefined ? { startDate: s.startDate } : {}),
    ...(s.endDate !== undefined ? { endDate: s.endDate } : {}),
    ...(s.description !== undefined ? { description: s.description } : {}),
    state: s.state === "ENABLED" ? "DISABLED" : "ENABLED",
  };
}

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
  const path = `/v1/schedules/${seg(name)}`;
  const { value: schedule, set: setSchedule, error, setError } = useNamed<Schedule>(path);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<string>();
  const write = can(me, "definitions:write");

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
      const next = await api.put<Schedule>(path, toggled(schedule));
      setSchedule(next);
      return `The schedule is ${next.state}.`;
    });

  const remove = () =>
    run(async () => {
      const question = `Delete the schedule ${name}? Its executions are kept.`;
      await deleteThenLeave(path, question, paths.schedules());
      return undefined;
    });

  if (!schedule)
    return (
      <NotYet
        title={`Schedule ${name}`}
        error={error}
        back={paths.schedules()}
        backText="All schedules"
      />
    );
  const { state, target } = schedule;
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
          <dd class="mono wrap">{schedule.scheduleExpression}</dd>
          <dt>Time zone</dt>
          <dd>{schedule.scheduleExpressionTimezone}</dd>
          <dt>Target</dt>
          <dd>
            <Link href={paths.machine(target.stateMachine)}>{targetText(target)}</Link>
          </dd>
          <dt>Next tick</dt>
          <dd data-next-tick>{state === "ENABLED" ? formatTime(schedule.nextTick) : "—"}</dd>
          <dt>Last tick</dt>
          <dd>
            {formatTime(schedule.lastTick)}
            {schedule.lastExecution ? (
              <>
                {" "}
                <Link href={paths.execution(schedule.lastExecution)}>execution</Link>
              </>
            ) : null}
          </dd>
          <dt>Overlap policy</dt>
          <dd>{schedule.overlapPolicy}</dd>
          <dt>Catch-up window</dt>
          <dd>{schedule.catchUpWindowSeconds} s</dd>
          <dt>Skipped ticks</dt>
          <dd>{schedule.skippedCount}</dd>
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
  const [answer, setAnswer] = useState<ScheduleBackfill["executions"]>();

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
      const body = await api.post<ScheduleBackfill>(`${path}/backfill`, { from: f, to: t });
      setAnswer(body.executions);
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
              : `${answer.filter((e) => e.created).length} started, ${
                  answer.filter((e) => !e.created).length
                } found started before.`}
          </p>
          <ul class="plain">
            {answer.map(({ executionId: id, tick, created }) => (
              <li key={id} data-backfilled={id}>
                {formatTime(tick)} →{" "}
                <Link href={paths.execution(id)} class="mono wrap">
                  {id.split(":").pop() ?? id}
                </Link>{" "}
                <span class="muted small">{created ? "started" : "existed"}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
