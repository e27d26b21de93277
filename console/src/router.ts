import { useEffect, useState } from "preact/hooks";

/**
 * History-API routing under /console/ (the server answers index.html for any
 * path that is not a file). Routes are matched by a pure function, tested alone.
 */

export const BASE = "/console";

export type Route =
  | { page: "machines" }
  | { page: "machine"; name: string }
  | { page: "executions" }
  | { page: "execution"; id: string }
  | { page: "approvals" }
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
};

const CHANGE = "stepwise:navigate";

export function navigate(href: string, replace = false): void {
  if (replace) history.replaceState(null, "", href);
  else history.pushState(null, "", href);
  window.dispatchEvent(new Event(CHANGE));
  if (!replace) window.scrollTo(0, 0);
}

export interface Location {
  pathname: string;
  query: URLSearchParams;
}

function current(): Location {
  return { pathname: location.pathname, query: new URLSearchParams(location.search) };
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return loc;
}
