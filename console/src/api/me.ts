import { api, ApiError } from "./client.js";
import type { Me } from "./types.js";

export { can, mayDecide } from "./permissions.js";

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
    throw err;
  }
}
