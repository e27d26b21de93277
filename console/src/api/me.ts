import { api, ApiError, authHeaders } from "./client.js";
import type { Approval, Me, Permission } from "./types.js";

/**
 * Who the console is talking as: `GET /v1/me`. Actions the key's scope cannot
 * perform are hidden, not merely refused, so this is read before any page.
 */

export type Session = { kind: "signed-in"; me: Me } | { kind: "needs-key"; message?: string };

export async function loadSession(): Promise<Session> {
  try {
    return { kind: "signed-in", me: await api.get<Me>("/v1/me") };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      return {
        kind: "needs-key",
        ...(err.code === "Unauthorized" ? {} : { message: err.message }),
      };
    }
    if (err instanceof ApiError && err.status === 404) return probeSession();
    throw err;
  }
}

/** Read permission per scope, and what each scope may do (api/auth.ts GRANTS). */
const GRANTS: Record<Me["scope"], Permission[]> = {
  admin: [
    "definitions:write",
    "definitions:read",
    "executions:write",
    "executions:read",
    "callback",
    "approvals:read",
    "approvals:decide",
  ],
  run: ["definitions:read", "executions:write", "executions:read"],
  callback: ["callback"],
  approve: ["approvals:read", "approvals:decide"],
};

/**
 * A server without `/v1/me` (older than the console): the scope is told by which
 * reads answer. Reads only: probing a write could change something.
 */
async function probeSession(): Promise<Session> {
  const answers = async (path: string) => {
    try {
      await api.get(path, { limit: 1 });
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw err;
      return false;
    }
  };
  try {
    const [machines, approvals] = await Promise.all([
      answers("/v1/state-machines"),
      answers("/v1/approvals"),
    ]);
    const scope: Me["scope"] =
      machines && approvals ? "admin" : machines ? "run" : approvals ? "approve" : "callback";
    const authenticated = authHeaders().authorization !== undefined;
    return {
      kind: "signed-in",
      me: { name: null, scope, permissions: GRANTS[scope], groups: [], authenticated },
    };
  } catch {
    return { kind: "needs-key" };
  }
}

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
  // Probed sessions (no /v1/me) do not know their groups: the server still decides.
  if (me.name === null) return true;
  return approval.approvers.length === 0 || approval.approvers.some((g) => me.groups.includes(g));
}
