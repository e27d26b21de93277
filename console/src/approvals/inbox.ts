import type { Approval } from "../api/types.js";

/**
 * The inbox's order: what expires first comes first (an approval that never
 * expires waits at the end), then the oldest. Pure, so the order is tested alone.
 */
export function inboxOrder(a: Approval, b: Approval): number {
  const ea = a.expiresAt === null ? Infinity : Date.parse(a.expiresAt);
  const eb = b.expiresAt === null ? Infinity : Date.parse(b.expiresAt);
  if (ea !== eb) return ea < eb ? -1 : 1;
  return Date.parse(a.createdAt) - Date.parse(b.createdAt);
}

/** "expires in 3 h 4 min" / "expired 2 min ago" / "never expires". */
export function timeLeft(expiresAt: string | null, now: number): string {
  if (expiresAt === null) return "never expires";
  const ms = Date.parse(expiresAt) - now;
  return ms > 0 ? `expires in ${duration(ms)}` : `expired ${duration(-ms)} ago`;
}

export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** Applies one change from the approvals stream to a list of pending approvals. */
export function applyChange(pending: Approval[], approval: Approval): Approval[] {
  const rest = pending.filter((a) => a.approvalId !== approval.approvalId);
  return approval.status === "PENDING" ? [...rest, approval].sort(inboxOrder) : rest;
}
