import { useEffect, useState } from "preact/hooks";
import { api, ApiError, seg } from "../api/client.js";
import { can } from "../api/me.js";
import type { Approval, Me, Page } from "../api/types.js";
import { waitingText } from "../approvals/human.js";
import { timeLeft } from "../approvals/inbox.js";
import type { PendingApprovals } from "../approvals/store.js";
import { JsonView } from "../components/JsonView.js";
import { Link } from "../components/Link.js";
import { ErrorNotice, formatTime, StatusBadge, useNow } from "../components/misc.js";
import { navigate, paths } from "../router.js";

/**
 * The approval inbox: what this key may decide, what expires first on top. A
 * decision echoes the envelope hash of the very record on screen — the proof that
 * the approver saw what they approved; if it changed meanwhile, the API refuses.
 */
export function ApprovalsPage(props: {
  me: Me;
  tab: "pending" | "decided";
  inbox: PendingApprovals;
}) {
  const { me, tab, inbox } = props;
  const [notice, setNotice] = useState<string>();

  if (!can(me, "approvals:read")) {
    return (
      <>
        <h1>Approvals</h1>
        <p class="notice">This API key ({me.scope}) may not read approvals.</p>
      </>
    );
  }

  return (
    <>
      <h1>Approvals</h1>
      <div class="tabs" role="tablist" aria-label="Approvals">
        <button
          type="button"
          role="tab"
          aria-selected={tab === "pending"}
          onClick={() => navigate(paths.approvals(), true)}
        >
          Pending{inbox.pending ? ` (${inbox.pending.length})` : ""}
        </button>
        <button
          type="button"
          role="tab"
          aria-selected={tab === "decided"}
          onClick={() => navigate(paths.approvals("decided"), true)}
        >
          Decided
        </button>
      </div>
      <p class="sr-status" role="status" aria-live="polite">
        {notice}
      </p>
      {tab === "pending" ? (
        <Pending me={me} inbox={inbox} onDecided={setNotice} />
      ) : (
        <Decided me={me} />
      )}
    </>
  );
}

/** Cards rendered at first: the inbox must paint fast with thousands pending. */
const SHOWN = 30;

function Pending({
  me,
  inbox,
  onDecided,
}: {
  me: Me;
  inbox: PendingApprovals;
  onDecided: (text: string) => void;
}) {
  const now = useNow(15_000);
  const [shown, setShown] = useState(SHOWN);
  if (inbox.error && !inbox.pending) return <ErrorNotice error={inbox.error} />;
  if (!inbox.pending) return <p class="muted">Loading…</p>;
  if (inbox.pending.length === 0) return <p class="muted">Nothing waits for your decision.</p>;
  const rest = inbox.pending.length - shown;
  return (
    <>
      <ul class="cards" aria-label="Pending approvals">
        {inbox.pending.slice(0, shown).map((a) => (
          <li key={a.approvalId}>
            <ApprovalCard
              approval={a}
              me={me}
              now={now}
              onDecided={(text) => {
                onDecided(text);
                inbox.reload();
              }}
              onStale={inbox.reload}
            />
          </li>
        ))}
      </ul>
      {rest > 0 ? (
        <button type="button" onClick={() => setShown(shown + SHOWN * 2)}>
          Show {Math.min(rest, SHOWN * 2)} more of {rest}
        </button>
      ) : null}
    </>
  );
}

function ApprovalFacts({ approval, me, now }: { approval: Approval; me: Me; now: number }) {
  return (
    <>
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
        <dt>Policy</dt>
        <dd>{approval.policy ?? "—"}</dd>
        <dt>Approvers</dt>
        <dd>
          {approval.approvers.length > 0 ? approval.approvers.join(", ") : "anyone who may approve"}{" "}
          · {approval.decisions.filter((d) => d.decision === "APPROVE").length} of{" "}
          {approval.requiredApprovals} approval{approval.requiredApprovals === 1 ? "" : "s"}
        </dd>
        <dt>Time left</dt>
        <dd>
          {approval.status === "PENDING"
            ? timeLeft(approval.expiresAt, now)
            : `closed ${formatTime(approval.closedAt)}`}
        </dd>
      </dl>
      <h4>Details</h4>
      <JsonView value={approval.details} label="Details" />
      {approval.decisions.length > 0 ? (
        <>
          <h4>Decided so far</h4>
          <ul class="plain decisions">
            {approval.decisions.map((d) => (
              <li key={d.approver}>
                <StatusBadge status={d.decision} /> <strong>{d.approver}</strong>{" "}
                <span class="muted">{formatTime(d.decidedAt)}</span>
                {d.comment ? <div class="comment">“{d.comment}”</div> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

function ApprovalCard(props: {
  approval: Approval;
  me: Me;
  now: number;
  onDecided: (text: string) => void;
  onStale: () => void;
}) {
  const { approval, me, now } = props;
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const commentId = `comment-${approval.approvalId}`;

  const decide = async (decision: "APPROVE" | "REJECT") => {
    setBusy(true);
    setError(undefined);
    try {
      await api.post<Approval>(`/v1/approvals/${seg(approval.approvalId)}/decisions`, {
        decision,
        // The hash of the record rendered above, not of a fresh read.
        envelopeHash: approval.envelopeHash,
        ...(comment.trim() !== "" ? { comment: comment.trim() } : {}),
      });
      props.onDecided(`${decision === "APPROVE" ? "Approved" : "Rejected"}: ${approval.subject}`);
    } catch (err) {
      setError(err);
      if (
        err instanceof ApiError &&
        ["EnvelopeMismatch", "ApprovalNotPending"].includes(err.code)
      ) {
        props.onStale();
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <article
      class="card approval"
      data-approval={approval.approvalId}
      aria-labelledby={`subject-${approval.approvalId}`}
    >
      <h3 id={`subject-${approval.approvalId}`}>
        <Link href={paths.approval(approval.approvalId)}>{approval.subject}</Link>
      </h3>
      <ApprovalFacts approval={approval} me={me} now={now} />
      {waitingText(approval) ? <p class="notice">{waitingText(approval)}</p> : null}
      {can(me, "approvals:decide") && approval.responseSchema !== undefined ? (
        // A form to fill: answered on the approval's own page (approvals/ApprovalView.tsx).
        <p>
          <Link href={paths.approval(approval.approvalId)}>Answer the form</Link>
        </p>
      ) : can(me, "approvals:decide") ? (
        <form class="decide" onSubmit={(e) => e.preventDefault()}>
          <label for={commentId}>Comment (optional)</label>
          <textarea
            id={commentId}
            rows={2}
            value={comment}
            maxLength={4096}
            onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)}
          />
          <ErrorNotice error={error} />
          <div class="actions">
            <button
              type="button"
              class="approve"
              disabled={busy}
              onClick={() => void decide("APPROVE")}
            >
              Approve
            </button>
            <button
              type="button"
              class="reject"
              disabled={busy}
              onClick={() => void decide("REJECT")}
            >
              Reject
            </button>
          </div>
        </form>
      ) : null}
    </article>
  );
}

function Decided({ me }: { me: Me }) {
  const [items, setItems] = useState<Approval[]>();
  const [cursor, setCursor] = useState<string>();
  const [error, setError] = useState<unknown>();
  const now = useNow(60_000);

  const load = async (after?: string) => {
    try {
      // The API filters one status at a time; the decided ones are all but PENDING.
      const page = await api.get<Page<Approval>>("/v1/approvals", { cursor: after, limit: 100 });
      const decided = page.items.filter((a) => a.status !== "PENDING");
      setItems((prev) => (after ? [...(prev ?? []), ...decided] : decided));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => void load(), []);

  return (
    <>
      <ErrorNotice error={error} />
      {items === undefined ? (
        <p class="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted">No decided approvals{cursor ? " on this page" : ""}.</p>
      ) : (
        <ul class="cards" aria-label="Decided approvals">
          {items.map((a) => (
            <li key={a.approvalId}>
              <article class="card approval" data-approval={a.approvalId}>
                <h3>
                  {a.subject} <StatusBadge status={a.status} />
                </h3>
                <ApprovalFacts approval={a} me={me} now={now} />
              </article>
            </li>
          ))}
        </ul>
      )}
      {cursor ? (
        <button type="button" onClick={() => void load(cursor)}>
          Load more
        </button>
      ) : null}
    </>
  );
}
