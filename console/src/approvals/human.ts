import type { Approval, Json, Me } from "../api/types.js";

/**
 * Human tasks in the console, the pure part: who may decide now (assignees,
 * delegation, escalation, as the server says: runtime/approvals/approval-record.ts),
 * where a decision stands for the one who made it, and the JSON Patch of edits.
 */

/** The caller's name as decisions record it (`local` without API keys). */
export function myName(me: Me): string {
  return me.name ?? "local";
}

export function deciders(a: Approval): { users: string[]; groups: string[] } {
  const d = a.delegatedTo;
  const users = d ? (d.user ? [d.user] : []) : (a.assignees ?? []);
  const groups = d ? (d.group ? [d.group] : []) : a.approvers;
  return { users, groups: [...new Set([...groups, ...(a.escalatedTo ?? [])])] };
}

export function mayDecideNow(me: Me, a: Approval): boolean {
  if (!me.permissions.includes("approvals:decide")) return false;
  if (me.scope === "admin" || !me.authenticated) return true;
  const { users, groups } = deciders(a);
  if (users.length === 0 && groups.length === 0) return true;
  return users.includes(myName(me)) || groups.some((g) => me.groups.includes(g));
}

export function decidedBy(me: Me, a: Approval): boolean {
  return a.decisions.some((d) => d.approver === myName(me));
}

/** Whether it belongs in this caller's inbox: pending, theirs to decide, not decided by them. */
export function inMyInbox(me: Me, a: Approval): boolean {
  return a.status === "PENDING" && mayDecideNow(me, a) && !decidedBy(me, a);
}

export function approvalsSoFar(a: Approval): number {
  return a.decisions.filter((d) => d.decision !== "REJECT").length;
}

/** "1 of 2 approvals, waiting for another approver", or undefined when it is not waiting. */
export function waitingText(a: Approval): string | undefined {
  if (a.status !== "PENDING") return undefined;
  const n = approvalsSoFar(a);
  if (n === 0) return undefined;
  const left = a.requiredApprovals - n;
  return `${n} of ${a.requiredApprovals} approvals, waiting for ${
    left === 1 ? "another approver" : `${left} more approvers`
  }`;
}

/** The live claim, if any. */
export function liveClaim(a: Approval, now: number): { by: string; until: string } | undefined {
  return a.claim && Date.parse(a.claim.until) > now ? a.claim : undefined;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** An `Editable` JSONPath ($.amount, $.payee.iban, $.lines[0].qty) as a JSON pointer. */
export function editablePointer(path: string): string | undefined {
  if (!path.startsWith("$")) return undefined;
  let rest = path.slice(1);
  const out: string[] = [];
  while (rest.length > 0) {
    const m =
      /^\.([A-Za-z_$][A-Za-z0-9_$-]*)/.exec(rest) ??
      /^\[(\d+)\]/.exec(rest) ??
      /^\['((?:[^'\\]|\\.)*)'\]/.exec(rest);
    if (!m) return undefined;
    out.push(escapePointer(m[1]!.replace(/\\(.)/g, "$1")));
    rest = rest.slice(m[0].length);
  }
  return out.length === 0 ? undefined : `/${out.join("/")}`;
}

/** The value at a JSON pointer, or undefined. */
export function valueAt(doc: Json, pointer: string): Json | undefined {
  let at: Json | undefined = doc;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(at)) at = at[Number(key)];
    else if (at !== null && typeof at === "object") at = at[key];
    else return undefined;
  }
  return at;
}

/**
 * The RFC 6902 patch of the edits against the details shown: a `replace` (or `add`
 * where the field was absent) per changed editable field, in `Editable`'s order.
 */
export function editPatch(
  details: Json,
  editable: readonly string[],
  edits: Readonly<Record<string, Json>>,
): { op: "replace" | "add"; path: string; value: Json }[] {
  const patch: { op: "replace" | "add"; path: string; value: Json }[] = [];
  for (const path of editable) {
    const pointer = editablePointer(path);
    if (!pointer || !(pointer in edits)) continue;
    const before = valueAt(details, pointer);
    const after = edits[pointer]!;
    if (JSON.stringify(before) === JSON.stringify(after)) continue;
    patch.push({ op: before === undefined ? "add" : "replace", path: pointer, value: after });
  }
  return patch;
}

/** Reads an edited field's text as the original's type (a number stays a number). */
export function parseEdit(original: Json | undefined, text: string): Json {
  if (typeof original === "number") {
    const n = Number(text);
    return text.trim() !== "" && Number.isFinite(n) ? n : text;
  }
  if (typeof original === "boolean") return text === "true";
  if (original !== null && typeof original === "object") {
    try {
      return JSON.parse(text) as Json;
    } catch {
      return text;
    }
  }
  return text;
}

export function editText(value: Json | undefined): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}
