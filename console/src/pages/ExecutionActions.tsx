import { useState } from "preact/hooks";
import { api, ApiError, seg } from "../api/client.js";
import { isLive, type ExecutionDetail, type ExecutionRecord } from "../api/types.js";
import { Link } from "../components/Link.js";
import { TextField } from "../components/misc.js";
import { paths } from "../router.js";

/** What the last action answered: shown until the next one. */
export interface Outcome {
  action: string;
  /** The answer in words. */
  text?: string;
  /** A new execution it started (Restart, Fork). */
  link?: { href: string; label: string };
  error?: unknown;
}

/**
 * The actions on one execution, each after a confirmation that says what it will do,
 * and each answered on the page: Pause (with an optional reason) and Resume, Stop
 * (with an error name and a cause), Redrive an ended one, Restart (a new execution,
 * same input and version). Fork lives in the timeline, on the event it starts from.
 */
export function ExecutionActions(props: {
  record: ExecutionDetail;
  outcome: Outcome | undefined;
  onOutcome: (outcome: Outcome | undefined) => void;
  onRecord: (record: ExecutionRecord) => void;
  onRedriven: () => void;
}) {
  const { record, outcome, onOutcome, onRecord } = props;
  const [busy, setBusy] = useState(false);
  const [stopError, setStopError] = useState("");
  const [stopCause, setStopCause] = useState("");
  const [reason, setReason] = useState("");
  const live = isLive(record.status);
  const ended = ["FAILED", "TIMED_OUT", "ABORTED"].includes(record.status);
  const path = `/v1/executions/${seg(record.executionId)}`;

  const run = async (action: string, call: () => Promise<Outcome | undefined>) => {
    setBusy(true);
    try {
      const answer = await call();
      if (answer) onOutcome(answer);
    } catch (err) {
      onOutcome({ action, error: err });
    } finally {
      setBusy(false);
    }
  };

  const pause = () =>
    run("Pause", async () => {
      const why = reason.trim();
      if (
        !confirm(
          `Pause this execution? Every run stops where it is${why ? ` (reason: ${why})` : ""}; tasks already running finish, and what arrives meanwhile waits until it is resumed.`,
        )
      )
        return undefined;
      const next = await api.post<ExecutionRecord>(`${path}/pause`, why ? { reason: why } : {});
      onRecord(next);
      return { action: "Pause", text: `the execution is ${next.status}` };
    });
  const resume = () =>
    run("Resume", async () => {
      if (
        !confirm(
          "Resume this execution? It goes on from where it stood, applying in order what arrived while it was paused.",
        )
      )
        return undefined;
      const next = await api.post<ExecutionRecord>(`${path}/resume`, {});
      onRecord(next);
      return { action: "Resume", text: `the execution is ${next.status}` };
    });
  const stop = () =>
    run("Stop", async () => {
      const error = stopError.trim();
      const cause = stopCause.trim();
      if (
        !confirm(
          `Stop this execution? It ends as ABORTED${error ? ` with the error ${error}` : ""}.`,
        )
      )
        return undefined;
      const next = await api.post<ExecutionRecord>(`${path}/stop`, {
        ...(error ? { error } : {}),
        ...(cause ? { cause } : {}),
      });
      onRecord(next);
      return {
        action: "Stop",
        text: `the execution is ${next.status}${next.error ? ` (${next.error})` : ""}`,
      };
    });
  const redrive = () =>
    run("Redrive", async () => {
      if (
        !confirm(
          `Redrive this ${record.status} execution? It runs again in place from the state it ended in, keeping everything before it.`,
        )
      )
        return undefined;
      const next = await api.post<ExecutionRecord>(`${path}/redrive`, {});
      onRecord(next);
      props.onRedriven();
      return {
        action: "Redrive",
        text: `the execution is ${next.status} again (redrive ${next.redriveCount ?? 1})`,
      };
    });
  const restart = () =>
    run("Restart", async () => {
      if (
        !confirm(
          "Restart: start a new execution of the same version with the same input? This one is not touched.",
        )
      )
        return undefined;
      const answer = await api.post<{ executionId: string }>(`${path}/restart`, {});
      return {
        action: "Restart",
        text: "started a new execution",
        link: { href: paths.execution(answer.executionId), label: "open it" },
      };
    });

  return (
    <div class="actions-bar" aria-label="Actions">
      <div class="actions">
        {live ? (
          record.status === "PAUSED" ? (
            <button type="button" disabled={busy} onClick={() => void resume()}>
              Resume
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={() => void pause()}>
              Pause
            </button>
          )
        ) : null}
        {live ? (
          <button type="button" class="danger" disabled={busy} onClick={() => void stop()}>
            Stop
          </button>
        ) : null}
        {ended ? (
          <button type="button" disabled={busy} onClick={() => void redrive()}>
            Redrive
          </button>
        ) : null}
        <button type="button" disabled={busy} onClick={() => void restart()}>
          Restart
        </button>
      </div>
      {live ? (
        <details class="action-options">
          <summary class="small">Reason (pause) · error and cause (stop)</summary>
          <div class="action-fields">
            {record.status !== "PAUSED" ? (
              <TextField label="Pause reason" value={reason} onValue={setReason} />
            ) : null}
            <TextField
              label="Stop error"
              value={stopError}
              placeholder="Operator.Stopped"
              onValue={setStopError}
            />
            <TextField label="Stop cause" value={stopCause} onValue={setStopCause} />
          </div>
        </details>
      ) : null}
      {outcome ? <OutcomeNotice outcome={outcome} /> : null}
    </div>
  );
}

function OutcomeNotice({ outcome }: { outcome: Outcome }) {
  if (outcome.error !== undefined) {
    const e = outcome.error;
    const text =
      e instanceof ApiError
        ? `${e.code}: ${e.message}`
        : e instanceof Error
          ? e.message
          : String(e);
    return (
      <p class="notice error outcome" role="alert">
        {outcome.action} refused — {text}
      </p>
    );
  }
  return (
    <p class="notice ok outcome" role="status">
      {outcome.action}: {outcome.text}
      {outcome.link ? (
        <>
          {" "}
          — <Link href={outcome.link.href}>{outcome.link.label}</Link>
        </>
      ) : null}
    </p>
  );
}
