import { useEffect, useState } from "preact/hooks";
import { api, ApiError, seg } from "../api/client.js";
import { can } from "../api/me.js";
import type { Approval, Json, Me } from "../api/types.js";
import { JsonView } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, StatusBadge, useNow } from "../components/misc.js";
import { initialValue, SchemaForm } from "../forms/schema-form.js";
import { paths } from "../router.js";
import {
  decidedBy,
  deciders,
  editablePointer,
  editPatch,
  editText,
  liveClaim,
  mayDecideNow,
  myName,
  parseEdit,
  valueAt,
  waitingText,
} from "./human.js";
import { timeLeft } from "./inbox.js";

/**
 * One approval at its own URL (`/console/approvals/:id`, which webhooks link to):
 * the form generated from its `responseSchema`, its editable fields beside their
 * originals with the resulting JSON Patch shown before it is sent, claim, release,
 * delegate and comments. A decision echoes the envelope hash of the record on screen.
 */
export function ApprovalView(props: { me: Me; id: string }) {
  const { me, id } = props;
  const [approval, setApproval] = useState<Approval>();
  const [error, setError] = useState<unknown>();
  const load = () =>
    api.get<Approval>(`/v1/approvals/${seg(id)}`).then(
      (a) => {
        setApproval(a);
        setError(undefined);
      },
      (err: unknown) => setError(err),
    );
  useEffect(() => void load(), [id]);

  if (!approval) {
    return (
      <>
        <h1>Approval</h1>
        {error ? <ErrorNotice error={error} /> : <p class="muted">Loading…</p>}
      </>
    );
  }
  return (
    <>
      <p>
        <Link href={paths.approvals()}>← Approvals</Link>
      </p>
      <h1>
        {approval.subject} <StatusBadge status={approval.status} />
      </h1>
      <Decision key={approval.envelopeHash} me={me} approval={approval} onChange={setApproval} />
    </>
  );
}

function Decision(props: { me: Me; approval: Approval; onChange: (a: Approval) => void }) {
  const { me, approval } = props;
  const now = useNow(15_000);
  const [response, setResponse] = useState<Json>(() =>
    approval.responseSchema !== undefined ? initialValue(approval.responseSchema) : null,
  );
  const [edits, setEdits] = useState<Record<string, Json>>({});
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const base = `/v1/approvals/${seg(approval.approvalId)}`;
  const editable = approval.editable ?? [];
  const patch = editPatch(approval.details, editable, edits);
  const claim = liveClaim(approval, now);
  const mine = myName(me);
  const blocked = claim !== undefined && claim.by !== mine;
  const decides =
    approval.status === "PENDING" && mayDecideNow(me, approval) && !decidedBy(me, approval);
  const waiting = waitingText(approval);

  const send = async (path: string, body: object, done: string) => {
    setBusy(true);
    setError(undefined);
    try {
      const next = await api.post<Approval>(`${base}${path}`, body);
      props.onChange(next);
      setNotice(done);
    } catch (err) {
      setError(err);
      if (err instanceof ApiError && ["EnvelopeMismatch", "ApprovalNotPending"].includes(err.code))
        setNotice("The approval changed meanwhile: read it again.");
    } finally {
      setBusy(false);
    }
  };

  const decide = (decision: "APPROVE" | "REJECT" | "EDIT" | "RESPOND") =>
    send(
      "/decisions",
      {
        decision,
        envelopeHash: approval.envelopeHash,
        ...(comment.trim() !== "" ? { comment: comment.trim() } : {}),
        // A rejection needs no answer (a half-filled form would only be refused).
        ...(approval.responseSchema !== undefined && decision !== "REJECT" ? { response } : {}),
        ...(decision === "EDIT" ? { patch } : {}),
      },
      decision === "REJECT" ? "Rejected" : decision === "RESPOND" ? "Answered" : "Approved",
    );

  return (
    <article class="card approval" data-approval={approval.approvalId}>
      <dl class="facts-list">
        <dt>State machine</dt>
        <dd>
          {approval.stateMachine} · {approval.stateName}
        </dd>
        <dt>Execution</dt>
        <dd class="wrap">
          {can(me, "executions:read") ? (
            <Link href={paths.execution(approval.executionId)}>
              {approval.executionId.split(":").pop()}
            </Link>
          ) : (
            approval.executionId.split(":").pop()
          )}
        </dd>
        <dt>Who decides</dt>
        <dd>
          {[...deciders(approval).users, ...deciders(approval).groups].join(", ") ||
            "anyone who may approve"}
          {approval.delegatedTo ? ` (delegated by ${approval.delegatedTo.by})` : ""}
        </dd>
        <dt>Approvals</dt>
        <dd>
          {approval.decisions.filter((d) => d.decision !== "REJECT").length} of{" "}
          {approval.requiredApprovals}
        </dd>
        {approval.dueAt ? (
          <>
            <dt>Due</dt>
            <dd>
              {formatTime(approval.dueAt)}
              {Date.parse(approval.dueAt) < now && approval.status === "PENDING"
                ? " (overdue)"
                : ""}
            </dd>
          </>
        ) : null}
        <dt>Time left</dt>
        <dd>
          {approval.status === "PENDING"
            ? timeLeft(approval.expiresAt, now)
            : `closed ${formatTime(approval.closedAt)}`}
        </dd>
        <dt>Claimed</dt>
        <dd data-claim>{claim ? `by ${claim.by} until ${formatTime(claim.until)}` : "no"}</dd>
      </dl>
      <h2>Details</h2>
      <JsonView value={approval.details} label="Details" />

      {waiting ? (
        <p class="notice" role="status" data-waiting>
          {waiting}
        </p>
      ) : null}
      <p class="sr-status" role="status" aria-live="polite" data-notice>
        {notice}
      </p>

      {decides ? (
        <form class="decide" onSubmit={(e) => e.preventDefault()}>
          {editable.length > 0 ? (
            <fieldset class="form-group edits">
              <legend>Edit before approving</legend>
              {editable.map((path) => {
                const pointer = editablePointer(path);
                if (!pointer) return null;
                const original = valueAt(approval.details, pointer);
                const fieldId = `edit-${pointer.replace(/[^A-Za-z0-9]/g, "-")}`;
                return (
                  <div class="form-field edit" key={path} data-edit={path}>
                    <label for={fieldId}>{path.replace(/^\$\.?/, "")}</label>
                    <input
                      id={fieldId}
                      type="text"
                      inputMode={typeof original === "number" ? "decimal" : "text"}
                      value={editText(pointer in edits ? edits[pointer] : original)}
                      onInput={(e) =>
                        setEdits({
                          ...edits,
                          [pointer]: parseEdit(original, (e.target as HTMLInputElement).value),
                        })
                      }
                    />
                    <small class="muted">was {editText(original) || "—"}</small>
                  </div>
                );
              })}
              {patch.length > 0 ? (
                <>
                  <h3>Changes to send (JSON Patch)</h3>
                  <pre class="patch" data-patch>
                    {JSON.stringify(patch, null, 2)}
                  </pre>
                </>
              ) : null}
            </fieldset>
          ) : null}
          {approval.responseSchema !== undefined ? (
            <fieldset class="form-group response">
              <legend>Your answer</legend>
              <SchemaForm
                schema={approval.responseSchema}
                value={response}
                onChange={setResponse}
                id={`response-${approval.approvalId}`}
              />
            </fieldset>
          ) : null}
          <label for="decision-comment">Comment (optional)</label>
          <textarea
            id="decision-comment"
            rows={2}
            value={comment}
            maxLength={4096}
            onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)}
          />
          <ErrorNotice error={error} />
          {blocked ? <p class="notice">Claimed by {claim!.by}: only they decide it now.</p> : null}
          <div class="actions">
            {patch.length > 0 ? (
              <button
                type="button"
                class="approve"
                disabled={busy || blocked}
                onClick={() => void decide("EDIT")}
              >
                Approve with changes
              </button>
            ) : (
              <button
                type="button"
                class="approve"
                disabled={busy || blocked}
                onClick={() => void decide("APPROVE")}
              >
                Approve
              </button>
            )}
            {approval.responseSchema !== undefined && patch.length === 0 ? (
              <button
                type="button"
                disabled={busy || blocked}
                onClick={() => void decide("RESPOND")}
              >
                Answer only
              </button>
            ) : null}
            <button
              type="button"
              class="reject"
              disabled={busy || blocked}
              onClick={() => void decide("REJECT")}
            >
              Reject
            </button>
          </div>
        </form>
      ) : approval.status === "PENDING" && decidedBy(me, approval) ? (
        <p class="muted">You have decided; it waits for the others.</p>
      ) : null}

      {approval.status === "PENDING" && mayDecideNow(me, approval) ? (
        <Assignment approval={approval} me={me} busy={busy} send={send} now={now} />
      ) : null}
      <Comments approval={approval} me={me} busy={busy} send={send} />
    </article>
  );
}

function Assignment(props: {
  approval: Approval;
  me: Me;
  busy: boolean;
  now: number;
  send: (path: string, body: object, done: string) => Promise<void>;
}) {
  const { approval, me, busy, send, now } = props;
  const [to, setTo] = useState("");
  const [kind, setKind] = useState<"toGroup" | "toUser">("toGroup");
  const [why, setWhy] = useState("");
  const claim = liveClaim(approval, now);
  const mine = claim?.by === myName(me);
  return (
    <section class="assignment" aria-label="Assignment">
      <h2>Assignment</h2>
      <div class="actions">
        {!claim ? (
          <button type="button" disabled={busy} onClick={() => void send("/claim", {}, "Claimed")}>
            Claim
          </button>
        ) : mine ? (
          <button
            type="button"
            disabled={busy}
            onClick={() => void send("/release", {}, "Released")}
          >
            Release
          </button>
        ) : null}
      </div>
      <form
        class="delegate"
        onSubmit={(e) => {
          e.preventDefault();
          if (to.trim() === "") return;
          void send(
            "/delegate",
            { [kind]: to.trim(), ...(why.trim() ? { comment: why.trim() } : {}) },
            `Delegated to ${to.trim()}`,
          );
        }}
      >
        <label for="delegate-kind">Delegate to</label>
        <select
          id="delegate-kind"
          value={kind}
          onChange={(e) => setKind((e.target as HTMLSelectElement).value as "toGroup" | "toUser")}
        >
          <option value="toGroup">group</option>
          <option value="toUser">user</option>
        </select>
        <input
          aria-label="Delegate to (name)"
          value={to}
          onInput={(e) => setTo((e.target as HTMLInputElement).value)}
        />
        <input
          aria-label="Why (comment)"
          placeholder="why"
          value={why}
          onInput={(e) => setWhy((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || to.trim() === ""}>
          Delegate
        </button>
      </form>
    </section>
  );
}

function Comments(props: {
  approval: Approval;
  me: Me;
  busy: boolean;
  send: (path: string, body: object, done: string) => Promise<void>;
}) {
  const { approval, me, busy, send } = props;
  const [text, setText] = useState("");
  const comments = approval.comments ?? [];
  return (
    <section class="comments" aria-label="Comments">
      <h2>Comments</h2>
      {comments.length === 0 ? <p class="muted">No comments.</p> : null}
      <ul class="plain">
        {comments.map((c, i) => (
          <li key={i}>
            <strong>{c.by}</strong> <span class="muted">{formatTime(c.at)}</span>
            <div class="comment">{c.text}</div>
          </li>
        ))}
      </ul>
      {approval.status === "PENDING" && mayDecideNow(me, approval) ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim() === "") return;
            void send("/comments", { text: text.trim() }, "Commented").then(() => setText(""));
          }}
        >
          <label for="new-comment">Add a comment</label>
          <textarea
            id="new-comment"
            rows={2}
            value={text}
            maxLength={4096}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
          />
          <button type="submit" disabled={busy || text.trim() === ""}>
            Comment
          </button>
        </form>
      ) : null}
    </section>
  );
}
