import type { RunEventBody } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import {
  APPROVAL_STATUSES,
  envelopeHash,
  schemaHash,
  type ApprovalEnvelope,
  type ApprovalStatus,
} from "../../engine/states/approval.js";
import { decodeCursor, encodeCursor } from "../store/canonical.js";
import { unpack } from "../store/codec.js";
import { RuntimeError, type Page } from "../contract/index.js";
import {
  applyDecision,
  readRecord,
  type ApprovalRecord,
  type Approver,
  type Assignment,
  type DecisionInput,
  type ShownEnvelope,
  type StoredApproval,
} from "./approval-record.js";
import { APPROVAL_FIELDS, EXECUTION_FIELDS } from "../store/fields.js";
import { longId } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { JobQueues } from "../worker/queues.js";
import { readHistoryEntries } from "../payloads/history-payloads.js";
import type { RedisClient } from "../store/redis.js";
import type { RuntimeSettings } from "../settings.js";
import { stepJob } from "../store/job-ids.js";
import { decideApproval } from "../store/scripts/decide-approval.js";
import { applyAssign, assignApproval, type AssignAction } from "./approval-assign.js";
import type { TaskRecord } from "../commit/effects.js";

export interface ApprovalFilter {
  status?: ApprovalStatus;
  /** Approvals whose `Approvers` name this group. */
  approver?: string;
  stateMachine?: string;
  cursor?: string;
  limit?: number;
}

const APPROVAL_ID = /^ap_[0-9a-f]{24}$/;

/**
 * The approval inbox: read, list (from the indexes the scripts keep, so a page
 * costs O(limit) reads however many approvals there are) and decide. Records are
 * created by the commit that schedules an approval task (runtime/commit/effects.ts) and
 * closed by the commit that cancels it (expiry, stop).
 */
export class ApprovalStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly queues: JobQueues,
    private readonly settings: RuntimeSettings,
  ) {}

  async get(approvalId: string): Promise<ApprovalRecord> {
    return (await this.load(approvalId)).record;
  }

  private async load(approvalId: string): Promise<StoredApproval> {
    const stored = APPROVAL_ID.test(approvalId)
      ? readRecord(await this.client.redis.hgetall(this.keys.approval(approvalId)))
      : undefined;
    if (!stored) {
      throw new RuntimeError("ApprovalDoesNotExist", `Approval '${approvalId}' does not exist`);
    }
    return stored;
  }

  async list(filter: ApprovalFilter): Promise<Page<ApprovalRecord>> {
    const limit = Math.max(1, Math.min(filter.limit ?? 100, 1000));
    const index = this.keys.approvalIndex(
      filter.status ?? "*",
      filter.approver ?? "*",
      filter.stateMachine ?? "*",
    );
    // Keyset pagination, newest first, as executions are listed: the cursor is the
    // last record shown (score, id), so approvals created meanwhile shift nothing.
    let after: { s: number; m: string } | undefined;
    if (filter.cursor !== undefined) {
      const c = decodeCursor(filter.cursor);
      if (!c || typeof c.s !== "number" || typeof c.m !== "string" || c.k !== "ap")
        throw new RuntimeError("InvalidCursor", "The cursor is not valid");
      after = { s: c.s, m: c.m };
    }
    const items: ApprovalRecord[] = [];
    for (let rounds = 0; rounds < 20; rounds++) {
      const batch = await this.olderThan(index, after, limit + 1 - items.length);
      if (batch.length === 0) return { items };
      const pipeline = this.client.redis.pipeline();
      for (const [id] of batch) pipeline.hgetall(this.keys.approval(id));
      const rows = (await pipeline.exec()) ?? [];
      const expired: string[] = [];
      for (let i = 0; i < batch.length; i++) {
        const [id, score] = batch[i]!;
        const stored = readRecord((rows[i]?.[1] ?? {}) as Record<string, string>);
        // Past retention: its index entries outlive it (Redis expired the record);
        // the ones a listing steps over go, so no listing pays for them twice.
        if (!stored) expired.push(id);
        // Or it changed status between the index read and the record read.
        if (!stored || (filter.status && stored.record.status !== filter.status)) {
          after = { s: score, m: id };
          continue;
        }
        if (items.length === limit) {
          if (expired.length > 0) await this.client.redis.zrem(index, ...expired);
          return { items, nextCursor: encodeCursor({ k: "ap", ...after! }) };
        }
        items.push(stored.record);
        after = { s: score, m: id };
      }
      if (expired.length > 0) await this.client.redis.zrem(index, ...expired);
    }
    return after ? { items, nextCursor: encodeCursor({ k: "ap", ...after }) } : { items };
  }

  /** Up to `count` index entries after `after`, newest first, as [id, created ms]. */
  private async olderThan(
    index: string,
    after: { s: number; m: string } | undefined,
    count: number,
  ): Promise<[string, number][]> {
    const redis = this.client.redis;
    const pairs = (flat: string[]): [string, number][] => {
      const out: [string, number][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, Number(flat[i + 1])]);
      return out;
    };
    if (!after) {
      return pairs(
        await redis.zrevrangebyscore(index, "+inf", "-inf", "WITHSCORES", "LIMIT", 0, count),
      );
    }
    // Ids of the cursor's own score come in descending byte order (ids are ASCII):
    // those below the cursor's id, then older scores.
    const same = pairs(await redis.zrevrangebyscore(index, after.s, after.s, "WITHSCORES")).filter(
      ([id]) => id < after.m,
    );
    if (same.length >= count) return same.slice(0, count);
    const older = pairs(
      await redis.zrevrangebyscore(
        index,
        `(${after.s}`,
        "-inf",
        "WITHSCORES",
        "LIMIT",
        0,
        count - same.length,
      ),
    );
    return [...same, ...older];
  }

  /**
   * Records a decision, atomically with delivering it to the run (decideApproval,
   * fenced by the record's decision count; a lost race reads the record again).
   */
  async decide(
    approvalId: string,
    approver: Approver,
    input: DecisionInput,
  ): Promise<ApprovalRecord> {
    let requested: { hash: string; shown: ShownEnvelope } | undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      const stored = await this.load(approvalId);
      const now = Date.now();
      const first = applyDecision(stored.record, approver, input, now);
      if (!first.ok && first.error !== "EnvelopeMismatch" && first.error !== "InvalidRequest") {
        throw new RuntimeError(first.error, first.message, first.details);
      }
      // The history (chained) is what a decision is checked against, never the record
      // alone: a changed record refuses (and is flagged) whatever hash was sent. The
      // form and the editable details are the ones the history recorded, too.
      requested ??= await this.requestedHash(approvalId, stored);
      const outcome = applyDecision(stored.record, approver, input, now, requested.shown);
      if (!outcome.ok) throw new RuntimeError(outcome.error, outcome.message, outcome.details);
      const event: RunEventBody = {
        type: "ApprovalDecided",
        taskId: longId(stored.task),
        approvalId,
        envelopeHash: requested.hash,
        decision: outcome.decision,
        status: outcome.status,
        decisions: outcome.decisions,
        caller: approver.name,
        ...(outcome.response !== undefined ? { response: outcome.response } : {}),
        ...(outcome.edit !== undefined ? { edit: outcome.edit } : {}),
      };
      const reply = await this.client.call(
        decideApproval,
        {
          approval: this.keys.approval(approvalId),
          tasks: this.keys.tasks,
          tokens: this.keys.tokens,
          schedule: this.keys.schedule,
        },
        {
          base: this.keys.base,
          id: approvalId,
          n: stored.n,
          decisions: JSON.stringify(outcome.decisions),
          status: outcome.status,
          event: JSON.stringify(event),
          // A decision ends the decider's own claim: the next approver may decide.
          assignment: stored.assignment,
          nextAssignment: withoutClaimOf(stored.assignment, approver.name),
          now,
          leaseMs: this.settings.leaseMs,
          tombstoneSeconds: this.settings.tombstoneTtlSeconds,
        },
      );
      if (reply.kind === "decided") {
        await this.queues.ensure(stepJob(reply.run, reply.seq));
        return (await this.load(approvalId)).record;
      }
      if (reply.kind === "notPending") {
        throw new RuntimeError(
          "ApprovalNotPending",
          `Approval '${approvalId}' is ${reply.status}; only a PENDING approval takes decisions`,
        );
      }
      if (reply.kind === "missing") {
        throw new RuntimeError("ApprovalDoesNotExist", `Approval '${approvalId}' does not exist`);
      }
      // raced: another decision was recorded between our read and our write.
    }
    throw new RuntimeError(
      "ApprovalNotPending",
      `Approval '${approvalId}' is being decided by others right now; read it again`,
    );
  }

  /**
   * Claims, releases, delegates or comments on an approval (approval-assign.ts):
   * recorded with its ApprovalNoted event for the run's history, fenced by the
   * assignment it was computed from (a lost race reads the record again).
   */
  async assign(
    approvalId: string,
    approver: Approver,
    input: AssignAction,
  ): Promise<ApprovalRecord> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const stored = await this.load(approvalId);
      const now = Date.now();
      const current = JSON.parse(stored.assignment || "{}") as Assignment;
      const outcome = applyAssign(stored.record, current, approver, input, now);
      if (!outcome.ok) throw new RuntimeError(outcome.error, outcome.message);
      const event: RunEventBody = {
        type: "ApprovalNoted",
        taskId: longId(stored.task),
        approvalId,
        kind: outcome.kind,
        by: approver.name,
        details: outcome.details,
        caller: approver.name,
      };
      const reply = await this.client.call(
        assignApproval,
        {
          approval: this.keys.approval(approvalId),
          tasks: this.keys.tasks,
          schedule: this.keys.schedule,
        },
        {
          base: this.keys.base,
          id: approvalId,
          expected: stored.assignment,
          next: JSON.stringify(outcome.next),
          event: JSON.stringify(event),
          webhook: outcome.webhook,
          groups: input.action === "delegate" && input.toGroup ? [input.toGroup] : [],
          now,
          leaseMs: this.settings.leaseMs,
        },
      );
      if (reply.kind === "noted") {
        await this.queues.ensure(stepJob(reply.run, reply.seq));
        return (await this.load(approvalId)).record;
      }
      if (reply.kind === "notPending") {
        throw new RuntimeError(
          "ApprovalNotPending",
          `Approval '${approvalId}' is ${reply.status}; only a PENDING approval can be claimed, delegated or commented`,
        );
      }
      if (reply.kind === "missing") {
        throw new RuntimeError("ApprovalDoesNotExist", `Approval '${approvalId}' does not exist`);
      }
    }
    throw new RuntimeError(
      "ApprovalNotPending",
      `Approval '${approvalId}' is being changed by others right now; read it again`,
    );
  }

  /**
   * The envelope hash the history recorded at ApprovalRequested, recomputed from the
   * envelope that event recorded; the record's envelope and hash must hash to the
   * same. Otherwise the record was changed behind the runtime's back: it refuses
   * decisions (ApprovalTampered, nothing recorded) and is flagged (`tampered`).
   */
  private async requestedHash(
    approvalId: string,
    stored: StoredApproval,
  ): Promise<{ hash: string; shown: ShownEnvelope }> {
    const { record } = stored;
    const fromRecord = envelopeHash(record);
    const found = await this.requestedEvent(approvalId, stored);
    let problem: string | undefined;
    let recorded: string | undefined;
    if (!found) {
      problem = "the history has no ApprovalRequested event for it";
    } else {
      recorded = envelopeHash(found.envelope);
      if (recorded !== found.hash) {
        problem = "the envelope ApprovalRequested recorded does not hash to the hash it recorded";
      } else if (fromRecord !== recorded || record.envelopeHash !== recorded) {
        problem =
          "its record no longer matches the envelope the history recorded at ApprovalRequested";
      } else if (
        found.envelope.responseSchemaHash !== undefined &&
        (found.responseSchema === undefined ||
          schemaHash(found.responseSchema) !== found.envelope.responseSchemaHash)
      ) {
        problem = "the ResponseSchema ApprovalRequested recorded does not hash to its hash";
      }
    }
    if (problem !== undefined || recorded === undefined) {
      await this.client.redis.hset(
        this.keys.approval(approvalId),
        APPROVAL_FIELDS.tampered,
        JSON.stringify({ at: new Date().toISOString(), why: problem }),
      );
      throw new RuntimeError(
        "ApprovalTampered",
        `Approval '${approvalId}' refuses decisions: ${problem ?? "its envelope cannot be checked"}; nothing was recorded`,
      );
    }
    const shown: ShownEnvelope = { details: found!.envelope.details };
    if (found!.responseSchema !== undefined) shown.responseSchema = found!.responseSchema;
    if (found!.envelope.editable !== undefined) shown.editable = found!.envelope.editable;
    return { hash: recorded, shown };
  }

  /**
   * The ApprovalRequested event of this approval: recorded in the step that entered
   * its state (event `enteredEventId`) or, after a Retry, later; history is
   * append-only, so it is read outside the deciding script.
   */
  private async requestedEvent(
    approvalId: string,
    stored: StoredApproval,
  ): Promise<{ envelope: ApprovalEnvelope; hash: string; responseSchema?: Json } | undefined> {
    const exec = stored.run.split("/")[0] ?? "";
    const count = await this.client.redis.hget(
      this.keys.execution(exec),
      EXECUTION_FIELDS.historyCount,
    );
    const total = Number(count ?? "0");
    const batch = 200;
    const first = Math.max(0, Math.min(stored.record.enteredEventId, total) - 1);
    for (let from = first; from < total; from += batch) {
      const to = Math.min(total, from + batch) - 1;
      const raw = await this.client.redis.lrangeBuffer(this.keys.history(exec), from, to);
      const hits = raw.filter((b) => unpack(b).includes(approvalId));
      if (hits.length === 0) continue;
      const entries = await readHistoryEntries(this.client, this.keys, exec, hits);
      for (const { event } of entries) {
        const envelope = requestedEnvelope(event, approvalId);
        if (envelope) return envelope;
      }
    }
    return undefined;
  }

  /**
   * Whether a token belongs to an approval: such a token is answered by a decision
   * bound to the envelope, never through /v1/task-tokens. A token's task never
   * changes kind, so reading outside the answering script is safe.
   */
  /** Whether this shard holds the approval (runtime.ts asks each shard). */
  async holds(approvalId: string): Promise<boolean> {
    return (
      APPROVAL_ID.test(approvalId) &&
      (await this.client.redis.exists(this.keys.approval(approvalId))) === 1
    );
  }

  async isApprovalToken(token: string): Promise<boolean> {
    const task = await this.client.redis.hget(this.keys.tokens, token);
    if (task === null) return false;
    const raw = await this.client.redis.hget(this.keys.tasks, task);
    if (raw === null) return false;
    const record = JSON.parse(raw) as TaskRecord;
    return record.mode === "park" && record.approvalId !== undefined;
  }
}

/** The envelope and hash an ApprovalRequested event of this approval recorded. */
function requestedEnvelope(
  event: HistoryEvent,
  approvalId: string,
): { envelope: ApprovalEnvelope; hash: string; responseSchema?: Json } | undefined {
  const d = event.approvalRequestedEventDetails as Record<string, Json> | undefined;
  if (event.type !== "ApprovalRequested" || !d || d.approvalId !== approvalId) return undefined;
  if (typeof d.envelopeHash !== "string" || typeof d.details !== "string") return undefined;
  const envelope = {
    executionId: d.executionId,
    stateName: d.stateName,
    enteredEventId: d.enteredEventId,
    subject: d.subject,
    details: JSON.parse(d.details) as Json,
    approvers: d.approvers,
    requiredApprovals: d.requiredApprovals,
    policy: d.policy,
    expiresAt: d.expiresAt,
  } as unknown as ApprovalEnvelope;
  // Human tasks: the form (its hash is in the envelope; the schema itself beside it).
  if (typeof d.responseSchemaHash === "string") envelope.responseSchemaHash = d.responseSchemaHash;
  if (Array.isArray(d.editable)) envelope.editable = d.editable as string[];
  if (Array.isArray(d.assignees)) envelope.assignees = d.assignees as string[];
  if (typeof d.responseSchema === "string") {
    return {
      envelope,
      hash: d.envelopeHash,
      responseSchema: JSON.parse(d.responseSchema) as Json,
    };
  }
  return { envelope, hash: d.envelopeHash };
}

export function isApprovalStatus(text: string): text is ApprovalStatus {
  return (APPROVAL_STATUSES as readonly string[]).includes(text);
}

/** The stored assignment without `name`'s claim (as stored when nothing changes). */
function withoutClaimOf(raw: string, name: string): string {
  if (raw === "") return raw;
  const assignment = JSON.parse(raw) as Assignment;
  if (assignment.claim?.by !== name) return raw;
  delete assignment.claim;
  return JSON.stringify(assignment);
}
