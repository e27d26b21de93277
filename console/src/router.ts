import { useEffect, useState } from "preact/hooks";

/** Navigation with the History API; the routes themselves are in routes.ts. */

export { BASE, matchRoute, paths, type Route } from "./routes.js";

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
