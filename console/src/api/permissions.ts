import type { Approval, Me, Permission } from "./types.js";

/** What the key may do, from `GET /v1/me`: pure, so the rules are tested alone. */

export function can(me: Me, permission: Permission): boolean {
  return me.permissions.includes(permission);
}

/**
 * Whether this key may decide an approval (the API's rule, api/README.md): admin
 * decides anything, an approve key those naming none of `Approvers` or sharing a group.
 */
export function mayDecide(me: Me, approval: Approval): boolean {
  if (!can(me, "approvals:decide")) return false;
  if (me.scope === "admin" || !me.authenticated) return true;
  return approval.approvers.length === 0 || approval.approvers.some((g) => me.groups.includes(g));
}
