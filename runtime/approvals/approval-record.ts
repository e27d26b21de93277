import type {
  ApprovalDecision,
  ApprovalEnvelope,
  ApprovalRequest,
  ApprovalStatus,
} from "../../engine/states/approval.js";
import { APPROVAL_FIELDS, fromStored, toStored } from "../store/fields.js";

/**
 * An approval record as Redis keeps it and as the API shows it. The pure part:
 * the fields of the hash `ap:<id>` (store/fields.ts `APPROVAL_FIELDS` names and
 * explains them), reading them back, and what one decision makes of a record.
 * runtime/approvals/approval-store.ts does the I/O; it flags a record that no
 * longer matches what the history recorded at ApprovalRequested (`tampered`):
 * such a record takes no decision.
 */
export interface ApprovalRecord extends ApprovalEnvelope {
  approvalId: string;
  stateMachine: string;
  createdAt: string;
  status: ApprovalStatus;
  decisions: ApprovalDecision[];
  envelopeHash: string;
  closedAt?: string;
}

/** The `<group>|<machine>` index dims of a record (`*` = any): see store/lua/approval.ts. */
export function indexDims(approvers: readonly string[], machine: string): string[] {
  const dims = ["*|*", `*|${machine}`];
  for (const group of approvers) dims.push(`${group}|*`, `${group}|${machine}`);
  return dims;
}

/** The field/value list of commitTransition's `approval` op. */
export function recordFields(
  request: ApprovalRequest,
  at: {
    run: string;
    task: string;
    token: string;
    timers: string[];
    now: number;
    notify: boolean;
    keepSeconds: number;
  },
): string[] {
  const fields = toStored(APPROVAL_FIELDS, {
    request: JSON.stringify(request),
    status: "PENDING",
    decisions: "[]",
    decisionCount: "0",
    createdAt: String(Date.parse(request.createdAt)),
    indexDims: indexDims(request.approvers, request.stateMachine).join(" "),
    run: at.run,
    task: at.task,
    token: at.token,
    timers: at.timers.join(" "),
    notify: at.notify ? "1" : "0",
    keepSeconds: String(at.keepSeconds),
  });
  return Object.entries(fields).flat();
}

export interface StoredApproval {
  record: ApprovalRecord;
  /** Decisions so far: the fence of the next decision. */
  n: number;
  run: string;
  task: string;
}

/** The record from its hash (HGETALL); undefined when there is none (or it expired). */
export function readRecord(hash: Record<string, string>): StoredApproval | undefined {
  const fields = fromStored(APPROVAL_FIELDS, hash);
  if (!fields.request || !fields.status) return undefined;
  const request = JSON.parse(fields.request) as ApprovalRequest;
  const record: ApprovalRecord = {
    approvalId: request.approvalId,
    executionId: request.executionId,
    stateMachine: request.stateMachine,
    stateName: request.stateName,
    enteredEventId: request.enteredEventId,
    subject: request.subject,
    details: request.details,
    approvers: request.approvers,
    requiredApprovals: request.requiredApprovals,
    policy: request.policy,
    createdAt: request.createdAt,
    expiresAt: request.expiresAt,
    status: fields.status as ApprovalStatus,
    decisions: JSON.parse(fields.decisions ?? "[]") as ApprovalDecision[],
    envelopeHash: request.envelopeHash,
  };
  if (fields.closedAt) record.closedAt = new Date(Number(fields.closedAt)).toISOString();
  return {
    record,
    n: Number(fields.decisionCount ?? 0),
    run: fields.run ?? "",
    task: fields.task ?? "",
  };
}

/**
 * Who decides: an API key's name and groups (`STEPWISE_API_KEYS` with scope
 * `approve`, groups from `STEPWISE_APPROVER_GROUPS`); `any` for admin keys and
 * for the loopback-only service without keys, whose approver is `local`.
 */
export interface Approver {
  name: string;
  groups: readonly string[] | "any";
}

export function mayDecide(record: ApprovalRecord, approver: Approver): boolean {
  if (approver.groups === "any" || record.approvers.length === 0) return true;
  const groups = approver.groups;
  return record.approvers.some((g) => groups.includes(g));
}

export interface DecisionInput {
  decision: "APPROVE" | "REJECT";
  envelopeHash: string;
  comment?: string;
}

export type DecisionOutcome =
  | {
      ok: true;
      decision: ApprovalDecision;
      decisions: ApprovalDecision[];
      status: "PENDING" | "APPROVED" | "REJECTED";
    }
  | {
      ok: false;
      error: "ApprovalNotPending" | "EnvelopeMismatch" | "AlreadyDecided" | "Forbidden";
      message: string;
    };

/**
 * What one decision makes of a record: refused (nothing is recorded), or the
 * decisions and status after it. One REJECT ends the approval; APPROVEs from
 * distinct approvers count up to `requiredApprovals` (the two-person rule).
 */
export function applyDecision(
  record: ApprovalRecord,
  approver: Approver,
  input: DecisionInput,
  now: number,
): DecisionOutcome {
  if (!mayDecide(record, approver)) {
    return {
      ok: false,
      error: "Forbidden",
      message: `'${approver.name}' is in none of the approval's groups (${record.approvers.join(", ")})`,
    };
  }
  if (record.status !== "PENDING") {
    return {
      ok: false,
      error: "ApprovalNotPending",
      message: `Approval '${record.approvalId}' is ${record.status}; only a PENDING approval takes decisions`,
    };
  }
  if (input.envelopeHash !== record.envelopeHash) {
    return {
      ok: false,
      error: "EnvelopeMismatch",
      message: `The envelopeHash sent is not the hash of approval '${record.approvalId}' (read it again: GET /v1/approvals/${record.approvalId}); nothing was recorded`,
    };
  }
  if (record.decisions.some((d) => d.approver === approver.name)) {
    const quorum =
      record.requiredApprovals > 1
        ? ` It needs ${record.requiredApprovals} distinct approvers: one caller cannot meet it alone${
            approver.name === "local"
              ? " — without API keys every decision is 'local'; configure STEPWISE_API_KEYS with a key per approver"
              : ""
          }.`
        : "";
    return {
      ok: false,
      error: "AlreadyDecided",
      message: `'${approver.name}' has already decided approval '${record.approvalId}'.${quorum}`,
    };
  }
  const decision: ApprovalDecision = {
    approver: approver.name,
    decision: input.decision,
    comment: input.comment ?? null,
    decidedAt: new Date(now).toISOString(),
  };
  const decisions = [...record.decisions, decision];
  const approvals = decisions.filter((d) => d.decision === "APPROVE").length;
  const status =
    input.decision === "REJECT"
      ? "REJECTED"
      : approvals >= record.requiredApprovals
        ? "APPROVED"
        : "PENDING";
  return { ok: true, decision, decisions, status };
}
