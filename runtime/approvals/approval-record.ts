import type { Json } from "../../engine/core/json.js";
import {
  applyEdit,
  responseProblem,
  type ApprovalDecision,
  type ApprovalEnvelope,
  type ApprovalRequest,
  type ApprovalStatus,
  type DecisionKind,
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
  /** The form a response must match (its hash, `responseSchemaHash`, is in the envelope). */
  responseSchema?: Json;
  /** When it is due (`DueInSeconds`); its reminders (seconds after creation) and escalation. */
  dueAt?: string;
  reminders?: number[];
  escalation?: { afterSeconds: number; to: string[] };
  /** Human tasks: who holds it, whom it was delegated to, groups escalation added, comments. */
  claim?: Claim;
  delegatedTo?: Delegation;
  escalatedTo?: string[];
  comments?: ApprovalComment[];
}

export interface Claim {
  by: string;
  /** When the claim lapses unless released sooner (RFC 3339). */
  until: string;
}

export interface Delegation {
  user?: string;
  group?: string;
  by: string;
  at: string;
  comment: string | null;
}

export interface ApprovalComment {
  by: string;
  at: string;
  text: string;
}

/** The mutable part of a record (`APPROVAL_FIELDS.assignment`): never in the envelope. */
export interface Assignment {
  claim?: Claim;
  delegatedTo?: Delegation;
  escalatedTo?: string[];
  comments?: ApprovalComment[];
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
  /** The assignment field as stored ('' when none): the fence of the next change to it. */
  assignment: string;
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
  if (request.responseSchemaHash !== undefined) {
    record.responseSchemaHash = request.responseSchemaHash;
    record.responseSchema = request.responseSchema ?? null;
  }
  if (request.editable !== undefined) record.editable = request.editable;
  if (request.assignees !== undefined) record.assignees = request.assignees;
  if (request.dueAt !== undefined) record.dueAt = request.dueAt;
  if (request.reminders !== undefined) record.reminders = request.reminders;
  if (request.escalation !== undefined) record.escalation = request.escalation;
  const assignment = JSON.parse(fields.assignment || "{}") as Assignment;
  if (assignment.claim) record.claim = assignment.claim;
  if (assignment.delegatedTo) record.delegatedTo = assignment.delegatedTo;
  if (assignment.escalatedTo) record.escalatedTo = assignment.escalatedTo;
  if (assignment.comments) record.comments = assignment.comments;
  if (fields.closedAt) record.closedAt = new Date(Number(fields.closedAt)).toISOString();
  return {
    record,
    n: Number(fields.decisionCount ?? 0),
    run: fields.run ?? "",
    task: fields.task ?? "",
    assignment: fields.assignment ?? "",
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

/**
 * Who may decide now: the `Assignees` and the `Approvers` groups, or whom it was
 * delegated to instead; plus the groups an escalation added. Nobody named: anyone.
 */
export function deciders(record: ApprovalRecord): { users: string[]; groups: string[] } {
  const d = record.delegatedTo;
  const users = d ? (d.user ? [d.user] : []) : (record.assignees ?? []);
  const groups = d ? (d.group ? [d.group] : []) : record.approvers;
  return { users, groups: [...new Set([...groups, ...(record.escalatedTo ?? [])])] };
}

export function mayDecide(record: ApprovalRecord, approver: Approver): boolean {
  if (approver.groups === "any") return true;
  const { users, groups } = deciders(record);
  if (users.length === 0 && groups.length === 0) return true;
  const mine = approver.groups;
  return users.includes(approver.name) || groups.some((g) => mine.includes(g));
}

/** The live claim of someone else, if any (a lapsed claim holds nobody). */
export function claimedByOther(
  record: ApprovalRecord,
  name: string,
  now: number,
): Claim | undefined {
  const claim = record.claim;
  return claim && claim.by !== name && Date.parse(claim.until) > now ? claim : undefined;
}

export interface DecisionInput {
  decision: DecisionKind;
  envelopeHash: string;
  comment?: string;
  /** The answer to the approval's `ResponseSchema`. */
  response?: Json;
  /** EDIT: an RFC 6902 JSON Patch against the details shown, within `Editable`. */
  patch?: Json;
}

/**
 * What the decision is checked against: the envelope ApprovalRequested recorded in
 * the history (the source of truth), with the form it showed.
 */
export interface ShownEnvelope {
  details: Json;
  responseSchema?: Json;
  editable?: readonly string[];
}

export type DecisionOutcome =
  | {
      ok: true;
      decision: ApprovalDecision;
      decisions: ApprovalDecision[];
      status: "PENDING" | "APPROVED" | "REJECTED";
      /** The latest response sent, and an EDIT's details and patch. */
      response?: Json;
      edit?: { details: Json; patch: Json };
    }
  | {
      ok: false;
      error:
        | "ApprovalNotPending"
        | "EnvelopeMismatch"
        | "AlreadyDecided"
        | "Forbidden"
        | "ApprovalClaimed"
        | "InvalidRequest";
      message: string;
      details?: Json[];
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
  shown: ShownEnvelope = shownOf(record),
): DecisionOutcome {
  if (!mayDecide(record, approver)) {
    return {
      ok: false,
      error: "Forbidden",
      message: `'${approver.name}' is in none of the approval's groups (${deciders(record).groups.join(", ")})${
        deciders(record).users.length > 0 ? ` nor its assignees` : ""
      }`,
    };
  }
  if (record.status !== "PENDING") {
    return {
      ok: false,
      error: "ApprovalNotPending",
      message: `Approval '${record.approvalId}' is ${record.status}; only a PENDING approval takes decisions`,
    };
  }
  const claim = claimedByOther(record, approver.name, now);
  if (claim) {
    return {
      ok: false,
      error: "ApprovalClaimed",
      message: `Approval '${record.approvalId}' is claimed by '${claim.by}' until ${claim.until}; nothing was recorded`,
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
  const invalid = formProblem(input, shown, record.decisions);
  if (invalid) return { ok: false, error: "InvalidRequest", ...invalid };
  const decision: ApprovalDecision = {
    approver: approver.name,
    decision: input.decision,
    comment: input.comment ?? null,
    decidedAt: new Date(now).toISOString(),
  };
  if (input.response !== undefined) decision.response = input.response;
  if (input.patch !== undefined) decision.patch = input.patch;
  const decisions = [...record.decisions, decision];
  // EDIT approves (with changes); RESPOND answers the form and counts as an approval.
  const approvals = decisions.filter((d) => d.decision !== "REJECT").length;
  const status =
    input.decision === "REJECT"
      ? "REJECTED"
      : approvals >= record.requiredApprovals
        ? "APPROVED"
        : "PENDING";
  return withAnswers({ ok: true, decision, decisions, status }, shown);
}

/** The latest response of the decisions, and the details their EDIT made with its patch. */
function withAnswers(
  outcome: Extract<DecisionOutcome, { ok: true }>,
  shown: ShownEnvelope,
): DecisionOutcome {
  const answered = outcome.decisions.filter((d) => d.response !== undefined).at(-1);
  if (answered) outcome.response = answered.response!;
  const edit = outcome.decisions.find((d) => d.decision === "EDIT");
  if (edit) {
    const applied = applyEdit(shown.details, edit.patch ?? null, shown.editable ?? []);
    if (applied.ok) outcome.edit = { details: applied.details, patch: edit.patch! };
  }
  return outcome;
}

/**
 * Why a decision does not fit the form shown (400, nothing recorded): a response
 * that fails `ResponseSchema` (named by its field), a response or patch where none
 * is asked, an EDIT outside `Editable`.
 */
export function formProblem(
  input: DecisionInput,
  shown: ShownEnvelope,
  earlier: readonly ApprovalDecision[],
): { message: string; details?: Json[] } | undefined {
  const kind = input.decision;
  if (input.patch !== undefined && kind !== "EDIT") {
    return { message: `Invalid body: 'patch' goes with decision EDIT, not ${kind}` };
  }
  if (kind === "EDIT") {
    if (!shown.editable || shown.editable.length === 0) {
      return { message: "Invalid body: this approval has no Editable fields; EDIT is not offered" };
    }
    if (input.patch === undefined) {
      return { message: "Invalid body: an EDIT needs 'patch' (RFC 6902 JSON Patch)" };
    }
    const other = earlier.find((d) => d.decision === "EDIT");
    if (other) {
      return {
        message: `Invalid body: '${other.approver}' already edited this approval; approve or reject the edited details`,
      };
    }
    const applied = applyEdit(shown.details, input.patch, shown.editable);
    if (!applied.ok) {
      return { message: `Invalid patch: ${applied.message}`, details: [{ pointer: "/patch" }] };
    }
  }
  if (shown.responseSchema === undefined) {
    if (kind === "RESPOND") {
      return {
        message: "Invalid body: this approval has no ResponseSchema; RESPOND is not offered",
      };
    }
    if (input.response !== undefined) {
      return { message: "Invalid body: this approval asks for no response (no ResponseSchema)" };
    }
    return undefined;
  }
  // A rejection may come without an answer; every other decision answers the form.
  if (input.response === undefined) {
    if (kind === "REJECT") return undefined;
    return {
      message: `Invalid body: a ${kind} of this approval needs 'response' matching its ResponseSchema`,
      details: [{ pointer: "/response" }],
    };
  }
  const problem = responseProblem(shown.responseSchema, input.response);
  if (problem) {
    const pointer = `/response${problem.field}`;
    return {
      message: `Invalid response: ${problem.field === "" ? "the response" : `'${problem.field}'`} ${problem.message}`,
      details: [{ pointer, field: problem.field, message: problem.message }],
    };
  }
  return undefined;
}

/** What the record itself says was shown (the store checks it against the history). */
export function shownOf(record: ApprovalRecord): ShownEnvelope {
  const shown: ShownEnvelope = { details: record.details };
  if (record.responseSchema !== undefined) shown.responseSchema = record.responseSchema;
  if (record.editable !== undefined) shown.editable = record.editable;
  return shown;
}
