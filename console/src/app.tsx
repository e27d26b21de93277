import { useEffect, useState } from "preact/hooks";
import { storedKey, storeKey } from "./api/client.js";
import { can, loadSession, type Session } from "./api/me.js";
import type { Me } from "./api/types.js";
import { usePendingApprovals } from "./approvals/store.js";
import { ApprovalView } from "./approvals/ApprovalView.js";
import { Link } from "./components/Link.js";
import { ErrorNotice, Forbidden } from "./components/misc.js";
import { ApprovalsPage } from "./pages/Approvals.js";
import { ExecutionPage } from "./pages/Execution.js";
import { EventsPage } from "./pages/Events.js";
import { ExecutionsPage } from "./pages/Executions.js";
import { LoginPage } from "./pages/Login.js";
import { RulePage, RulesPage } from "./pages/Rules.js";
import { SchedulePage, SchedulesPage } from "./pages/Schedules.js";
import { StateMachinePage } from "./pages/StateMachine.js";
import { StateMachinesPage } from "./pages/StateMachines.js";
import { BASE, matchRoute, navigate, paths, useLocation, type Location } from "./router.js";

export function App() {
  const [session, setSession] = useState<Session>();
  const [error, setError] = useState<unknown>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    loadSession().then((s) => {
      // A key the server refuses is forgotten, so the form asks for another.
      if (s.kind === "needs-key" && storedKey() !== null) {
        storeKey(null);
        setSession({ kind: "needs-key", message: "The server does not know this API key." });
      } else setSession(s);
    }, setError);
  }, [attempt]);

  if (error) {
    return (
      <main id="main">
        <ErrorNotice error={error} />
      </main>
    );
  }
  if (!session) return <p class="muted">Loading…</p>;
  if (session.kind === "needs-key") {
    return <LoginPage message={session.message} onSignedIn={() => setAttempt((n) => n + 1)} />;
  }
  return (
    <Shell
      me={session.me}
      onSignOut={() => {
        storeKey(null);
        setAttempt((n) => n + 1);
      }}
    />
  );
}

function Shell({ me, onSignOut }: { me: Me; onSignOut: () => void }) {
  const loc = useLocation();
  const inbox = usePendingApprovals(me);
  const route = matchRoute(loc.pathname);
  const count = inbox.pending?.length;

  useEffect(() => {
    // The home page is what this key can use: the inbox for approvers, machines otherwise.
    if (route.page === "home") {
      const home = can(me, "definitions:read")
        ? paths.machines()
        : can(me, "approvals:read")
          ? paths.approvals()
          : paths.machines();
      navigate(home, true);
    }
  }, [route.page]);

  const current = (page: string) =>
    route.page === page || route.page === page.replace(/s$/, "") ? "page" : undefined;

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={`${BASE}/`}>
          Stepwise
        </a>
        <nav aria-label="Main">
          <ul>
            {can(me, "definitions:read") ? (
              <li aria-current={current("machines")}>
                <Link href={paths.machines()}>State machines</Link>
              </li>
            ) : null}
            {can(me, "executions:read") ? (
              <li aria-current={current("executions")}>
                <Link href={paths.executions()}>Executions</Link>
              </li>
            ) : null}
            {can(me, "definitions:read") ? (
              <li aria-current={current("schedules")}>
                <Link href={paths.schedules()}>Schedules</Link>
              </li>
            ) : null}
            {can(me, "definitions:read") ? (
              <li aria-current={current("rules")}>
                <Link href={paths.rules()}>Rules</Link>
              </li>
            ) : null}
            {can(me, "executions:read") ? (
              <li aria-current={current("events")}>
                <Link href={paths.events()}>Events</Link>
              </li>
            ) : null}
            {can(me, "approvals:read") ? (
              <li aria-current={current("approvals")}>
                <Link href={paths.approvals()}>
                  Approvals{" "}
                  {count !== undefined && count > 0 ? (
                    <>
                      <span class="count" data-pending-count={count} aria-hidden="true">
                        {count}
                      </span>
                      <span class="sr-only">, {count} pending</span>
                    </>
                  ) : null}
                </Link>
              </li>
            ) : null}
          </ul>
        </nav>
        <div class="who">
          <span class="muted small">
            {me.authenticated
              ? `${me.name ?? "key"} · ${me.scope}`
              : "no keys configured (loopback)"}
          </span>
          {me.authenticated ? (
            <button type="button" class="small" onClick={onSignOut}>
              Sign out
            </button>
          ) : null}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page me={me} loc={loc} inbox={inbox} />
      </main>
    </>
  );
}

function Page({
  me,
  loc,
  inbox,
}: {
  me: Me;
  loc: Location;
  inbox: ReturnType<typeof usePendingApprovals>;
}) {
  const route = matchRoute(loc.pathname);
  // A page this key may not read says so once, and loads nothing.
  if ((route.page === "machines" || route.page === "machine") && !can(me, "definitions:read"))
    return <Forbidden me={me} need="definitions:read" what="read state machines" />;
  if (route.page === "executions" && !can(me, "executions:read"))
    return <Forbidden me={me} need="executions:read" what="read executions" />;
  if (
    (route.page === "schedules" ||
      route.page === "schedule" ||
      route.page === "rules" ||
      route.page === "rule") &&
    !can(me, "definitions:read")
  )
    return <Forbidden me={me} need="definitions:read" what="read schedules and rules" />;
  if (route.page === "events" && !can(me, "executions:read"))
    return <Forbidden me={me} need="executions:read" what="read the events on the bus" />;
  switch (route.page) {
    case "schedules":
      return <SchedulesPage />;
    case "schedule":
      return <SchedulePage me={me} name={route.name} />;
    case "rules":
      return <RulesPage />;
    case "rule":
      return <RulePage me={me} name={route.name} />;
    case "events":
      return <EventsPage me={me} />;
    case "machines":
      return <StateMachinesPage />;
    case "machine": {
      const v = Number(loc.query.get("version"));
      return (
        <StateMachinePage
          me={me}
          name={route.name}
          {...(Number.isInteger(v) && v > 0 ? { version: v } : {})}
        />
      );
    }
    case "executions":
      return <ExecutionsPage me={me} loc={loc} />;
    case "execution":
      return <ExecutionPage me={me} id={route.id} />;
    case "approvals":
      return (
        <ApprovalsPage
          me={me}
          tab={loc.query.get("tab") === "decided" ? "decided" : "pending"}
          inbox={inbox}
        />
      );
    case "approval":
      return <ApprovalView me={me} id={route.id} />;
    case "home":
      return null;
    case "not-found":
      return (
        <>
          <h1>Not found</h1>
          <p>
            Nothing lives at <code>{route.path}</code>.{" "}
            <Link href={paths.machines()}>State machines</Link>
          </p>
        </>
      );
  }
}
