/**
 * The shapes the console reads from the REST API (api/schemas.ts, api/plugins/*.ts).
 * Declared here rather than imported: the browser bundle must not pull server code,
 * and the console tsconfig checks only console/src.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type ExecutionStatus =
  "RUNNING" | "PAUSED" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = [
  "RUNNING",
  "PAUSED",
  "SUCCEEDED",
  "FAILED",
  "TIMED_OUT",
  "ABORTED",
];

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export interface StateMachineSummary {
  name: string;
  version: number;
  definitionHash: string;
  createdAt: string;
}

export interface StateMachineDetail extends StateMachineSummary {
  definition: Record<string, unknown>;
  versions: StateMachineSummary[];
  latestVersion: number;
}

export interface ExecutionSummary {
  executionId: string;
  name: string;
  stateMachine: string;
  version: number;
  status: ExecutionStatus;
  error?: string;
  startedAt: string;
  stoppedAt?: string;
}

export interface PendingTask {
  stateName: string;
  resource: string;
  scheduledAt: string;
  timeoutAt?: string;
  heartbeatDeadline?: string;
  approvalId?: string;
}

/** Running or paused: not ended (a paused execution still runs underneath). */
export function isLive(status: ExecutionStatus): boolean {
  return status === "RUNNING" || status === "PAUSED";
}

export interface ExecutionDetail extends ExecutionSummary {
  input: Json;
  /** While PAUSED: why, who paused it and when. */
  pause?: { reason?: string | null; by?: string | null; at?: string };
  output?: Json;
  cause?: string;
  pendingTasks: PendingTask[];
}

/** AWS-shaped: `id`, `previousEventId`, `timestamp`, `type` and one `…EventDetails` object. */
export interface HistoryEvent {
  id: number;
  previousEventId: number;
  timestamp: string;
  type: string;
  [detailsKey: string]: unknown;
}

export type ApprovalStatus = "PENDING" | "APPROVED" | "REJECTED" | "EXPIRED" | "CANCELLED";

export interface ApprovalDecision {
  approver: string;
  decision: "APPROVE" | "REJECT";
  comment: string | null;
  decidedAt: string;
}

export interface Approval {
  approvalId: string;
  executionId: string;
  stateMachine: string;
  stateName: string;
  enteredEventId: number;
  subject: string;
  details: Json;
  approvers: string[];
  requiredApprovals: number;
  policy: string | null;
  createdAt: string;
  expiresAt: string | null;
  status: ApprovalStatus;
  decisions: ApprovalDecision[];
  envelopeHash: string;
  closedAt?: string;
}

export type Permission =
  | "identity"
  | "executions:purge"
  | "definitions:write"
  | "definitions:read"
  | "executions:write"
  | "executions:read"
  | "callback"
  | "approvals:read"
  | "approvals:decide";

/** `GET /v1/me`. */
export interface Me {
  name: string | null;
  scope: "admin" | "run" | "callback" | "approve";
  permissions: Permission[];
  groups: string[];
  authenticated: boolean;
}

export interface ApiErrorBody {
  error: string;
  message: string;
  details?: unknown[];
}
