import type { ApprovalNoteKind } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import { GROUP_PATTERN } from "../../engine/states/approval.js";
import { APPROVAL_LUA } from "../store/lua/approval.js";
import { defineScript } from "../store/lua/spec.js";
import {
  claimedByOther,
  mayDecide,
  type ApprovalRecord,
  type Approver,
  type Assignment,
  type Claim,
} from "./approval-record.js";

/**
 * Human tasks: claim, release, delegate and comment (issue 40). The pure part says
 * what an action makes of a record's assignment (never its envelope: what was
 * reviewed does not change because someone else now reviews it); the script
 * records it and delivers an `ApprovalNoted` event to the run, atomically, so the
 * history (hash-chained, the audit chain) has every change in order.
 */

export type AssignAction =
  | { action: "claim"; seconds?: number }
  | { action: "release" }
  | { action: "delegate"; toUser?: string; toGroup?: string; comment?: string }
  | { action: "comment"; text: string };

/** How long a claim holds by default (seconds), and at most (a week). */
export const DEFAULT_CLAIM_SECONDS = 3600;
export const MAX_CLAIM_SECONDS = 7 * 24 * 3600;
/** The newest comments a record keeps for the console (the history keeps all). */
const KEPT_COMMENTS = 100;
const NAME = new RegExp(GROUP_PATTERN);

export type AssignOutcome =
  | {
      ok: true;
      next: Assignment;
      kind: ApprovalNoteKind;
      details: { [field: string]: Json };
      /** The webhook event (`approval.claimed`…). */
      webhook: string;
    }
  | {
      ok: false;
      error: "Forbidden" | "ApprovalNotPending" | "ApprovalClaimed" | "InvalidRequest";
      message: string;
    };

type Refusal = Extract<AssignOutcome, { ok: false }>;

/** What one action makes of the assignment, or why it is refused (nothing recorded). */
export function applyAssign(
  record: ApprovalRecord,
  current: Assignment,
  approver: Approver,
  input: AssignAction,
  now: number,
): AssignOutcome {
  const id = record.approvalId;
  if (!mayDecide(record, approver)) {
    return {
      ok: false,
      error: "Forbidden",
      message: `'${approver.name}' may not act on approval '${id}': it is neither assigned to them nor to one of their groups`,
    };
  }
  if (record.status !== "PENDING") {
    return {
      ok: false,
      error: "ApprovalNotPending",
      message: `Approval '${id}' is ${record.status}; only a PENDING approval can be claimed, delegated or commented`,
    };
  }
  const at = { id, now, iso: new Date(now).toISOString(), next: structuredClone(current) };
  const held = claimedByOther(record, approver.name, now);
  const heldBy = (claim: Claim): Refusal => ({
    ok: false,
    error: "ApprovalClaimed",
    message: `Approval '${id}' is claimed by '${claim.by}' until ${claim.until}`,
  });
  switch (input.action) {
    case "claim":
      return held ? heldBy(held) : claim(at, approver, input.seconds);
    case "release":
      return release(at, current, approver);
    case "delegate":
      return held && approver.groups !== "any" ? heldBy(held) : delegate(at, approver, input);
    case "comment":
      return comment(at, current, approver, input.text);
  }
}

interface At {
  id: string;
  now: number;
  iso: string;
  /** The assignment to change (a copy of the current one). */
  next: Assignment;
}

function claim(at: At, approver: Approver, seconds = DEFAULT_CLAIM_SECONDS): AssignOutcome {
  const until = new Date(at.now + seconds * 1000).toISOString();
  at.next.claim = { by: approver.name, until };
  return {
    ok: true,
    next: at.next,
    kind: "ApprovalClaimed",
    details: { until },
    webhook: "approval.claimed",
  };
}

function release(at: At, current: Assignment, approver: Approver): AssignOutcome {
  const claim = current.claim;
  if (!claim || Date.parse(claim.until) <= at.now) {
    return { ok: false, error: "InvalidRequest", message: `Approval '${at.id}' is not claimed` };
  }
  if (claim.by !== approver.name && approver.groups !== "any") {
    return {
      ok: false,
      error: "ApprovalClaimed",
      message: `Approval '${at.id}' is claimed by '${claim.by}': only they (or an admin) release it`,
    };
  }
  delete at.next.claim;
  return {
    ok: true,
    next: at.next,
    kind: "ApprovalReleased",
    details: { claimedBy: claim.by },
    webhook: "approval.released",
  };
}

function delegate(
  at: At,
  approver: Approver,
  input: Extract<AssignAction, { action: "delegate" }>,
): AssignOutcome {
  const { toUser, toGroup } = input;
  if ((toUser === undefined) === (toGroup === undefined)) {
    return {
      ok: false,
      error: "InvalidRequest",
      message: "Invalid body: delegate to exactly one of 'toUser' and 'toGroup'",
    };
  }
  const to = (toUser ?? toGroup)!;
  if (!NAME.test(to)) {
    return {
      ok: false,
      error: "InvalidRequest",
      message: `Invalid body: '${to}' does not match ${GROUP_PATTERN}`,
    };
  }
  const comment = input.comment ?? null;
  const target = toUser !== undefined ? { user: toUser } : { group: toGroup! };
  at.next.delegatedTo = { ...target, by: approver.name, at: at.iso, comment };
  // The delegate starts unclaimed.
  delete at.next.claim;
  const details: { [field: string]: Json } = { comment };
  if (toUser !== undefined) details.toUser = toUser;
  else details.toGroup = toGroup!;
  return {
    ok: true,
    next: at.next,
    kind: "ApprovalDelegated",
    details,
    webhook: "approval.delegated",
  };
}

function comment(at: At, current: Assignment, approver: Approver, raw: string): AssignOutcome {
  const text = raw.trim();
  if (text === "") {
    return { ok: false, error: "InvalidRequest", message: "Invalid body: 'text' is empty" };
  }
  const comments = [...(current.comments ?? []), { by: approver.name, at: at.iso, text }];
  at.next.comments = comments.slice(-KEPT_COMMENTS);
  return {
    ok: true,
    next: at.next,
    kind: "ApprovalCommented",
    details: { comment: text },
    webhook: "approval.commented",
  };
}

export interface AssignApprovalArgs {
  base: string;
  id: string;
  /** The assignment field the change was computed from ('' = none): the fence. */
  expected: string;
  next: string;
  /** The ApprovalNoted event for the run (JSON). */
  event: string;
  webhook: string;
  /** Groups that may decide from now on (a delegation to a group): indexed under them. */
  groups: string[];
  now: number;
  leaseMs: number;
}

export type AssignApprovalReply =
  | { kind: "noted"; run: string; seq: number }
  | { kind: "notPending"; status: string }
  | { kind: "raced" }
  | { kind: "missing" };

/**
 * assignApproval: records a change of a PENDING approval's assignment and delivers
 * its ApprovalNoted event to the run, fenced by the assignment it was computed
 * from. Refused as decideApproval refuses: the approval expiring (a timer of its
 * task fired), its task gone, its execution stopped or stopping.
 */
export const assignApproval = defineScript<AssignApprovalArgs, AssignApprovalReply>()({
  name: "assignApproval",
  keys: ["approval", "tasks", "schedule"],
  replies: ["noted", "notPending", "raced", "missing"],
  helpers: [APPROVAL_LUA],
  lua: `
local base, key, id = ARG.base, KEY.approval, ARG.id
local f = hmgetNamed(key, APPROVAL, {'status', 'timers', 'task', 'run', 'assignment'})
if not f.status then return reply('missing') end
if f.status ~= 'PENDING' then return reply('notPending', {status = f.status}) end
if (f.assignment or '') ~= ARG.expected then return reply('raced') end
for m in string.gmatch(f.timers or '', '%S+') do
  if not redis.call('ZSCORE', KEY.schedule, m) then
    return reply('notPending', {status = 'EXPIRED'})
  end
end
local run = f.run
local q = redis.call('HGET', base .. KIND.run .. run, RUN.seq)
if not q or redis.call('HEXISTS', KEY.tasks, f.task) == 0 then
  return reply('notPending', {status = 'CANCELLED'})
end
local exec = string.match(run, '^[^/]+')
if redis.call('HGET', base .. KIND.execution .. exec, EXEC.status) ~= 'RUNNING' then
  return reply('notPending', {status = 'CANCELLED'})
end
for _, e in ipairs(redis.call('LRANGE', base .. KIND.inbox .. exec, 0, 63)) do
  if string.find(e, '"type":"Stop"', 1, true) then return reply('notPending', {status = 'CANCELLED'}) end
end
redis.call('HSET', key, APPROVAL.assignment, ARG.next)
if #ARG.groups > 0 then approvalAddGroups(base, id, key, ARG.groups) end
approvalEvent(base, key, id, ARG.webhook)
redis.call('RPUSH', base .. KIND.inbox .. run, ARG.event)
redis.call('ZADD', KEY.schedule, ARG.now + ARG.leaseMs, MEMBER.run .. run)
return reply('noted', {run = run, seq = tonumber(q)})
`,
});
