/**
 * The console's pages and their URLs under /console/ (the server answers index.html
 * for any path that is not a file, so the History API can route). Pure: no DOM,
 * no Preact, tested alone.
 */

export const BASE = "/console";

export type Route =
  | { page: "machines" }
  | { page: "machine"; name: string }
  | { page: "executions" }
  | { page: "execution"; id: string }
  | { page: "approvals" }
  | { page: "approval"; id: string }
  | { page: "schedules" }
  | { page: "schedule"; name: string }
  | { page: "rules" }
  | { page: "rule"; name: string }
  | { page: "events" }
  | { page: "home" }
  | { page: "not-found"; path: string };

export function matchRoute(pathname: string): Route {
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = path.split("/").filter((p) => p !== "");
  const [first, second] = parts;
  const decoded = second === undefined ? undefined : safeDecode(second);
  if (parts.length === 0) return { page: "home" };
  if (first === "machines" && parts.length === 1) return { page: "machines" };
  if (first === "machines" && parts.length === 2 && decoded)
    return { page: "machine", name: decoded };
  if (first === "executions" && parts.length === 1) return { page: "executions" };
  if (first === "executions" && parts.length === 2 && decoded)
    return { page: "execution", id: decoded };
  if (first === "approvals" && parts.length === 1) return { page: "approvals" };
  if (first === "approvals" && parts.length === 2 && decoded)
    return { page: "approval", id: decoded };
  if (first === "schedules" && parts.length === 1) return { page: "schedules" };
  if (first === "schedules" && parts.length === 2 && decoded)
    return { page: "schedule", name: decoded };
  if (first === "rules" && parts.length === 1) return { page: "rules" };
  if (first === "rules" && parts.length === 2 && decoded) return { page: "rule", name: decoded };
  if (first === "events" && parts.length === 1) return { page: "events" };
  return { page: "not-found", path };
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export const paths = {
  machines: () => `${BASE}/machines`,
  machine: (name: string, version?: number) =>
    `${BASE}/machines/${encodeURIComponent(name)}${version !== undefined ? `?version=${version}` : ""}`,
  executions: (query: Record<string, string | undefined> = {}) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
    const text = q.toString();
    return `${BASE}/executions${text ? `?${text}` : ""}`;
  },
  execution: (id: string) => `${BASE}/executions/${encodeURIComponent(id)}`,
  approvals: (tab?: "decided") => `${BASE}/approvals${tab ? `?tab=${tab}` : ""}`,
  approval: (id: string) => `${BASE}/approvals/${encodeURIComponent(id)}`,
  schedules: () => `${BASE}/schedules`,
  schedule: (name: string) => `${BASE}/schedules/${encodeURIComponent(name)}`,
  rules: () => `${BASE}/rules`,
  rule: (name: string) => `${BASE}/rules/${encodeURIComponent(name)}`,
  events: () => `${BASE}/events`,
};
