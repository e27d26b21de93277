import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client.js";
import {
  EXECUTION_STATUSES,
  type ExecutionSummary,
  type Me,
  type Page,
  type StateMachineSummary,
} from "../api/types.js";
import { Link } from "../components/Link.js";
import { can } from "../api/permissions.js";
import { BulkActions } from "../bulk/BulkActions.js";
import { listQuery, SINCE } from "../bulk/filters.js";
import { ErrorNotice, formatDuration, formatTime, StatusBadge } from "../components/misc.js";
import { navigate, paths, type Location } from "../router.js";

/** The list re-reads its page this often: cheap (O(limit)) and enough for a list. */
const REFRESH_MS = 2000;
const PAGE_SIZE = 50;
const SEARCH_DELAY_MS = 250;

/** The filters, all in the URL so that a view can be shared (and survives Back). */
const FILTERS = ["q", "stateMachine", "status", "error", "since", "from", "to", "cursor"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** The page before each cursor, kept per tab so Newer works after a reload or a Back. */
const PREVIOUS = "stepwise.executions.previous:";

function readFilters(loc: Location): Filters {
  const out = {} as Filters;
  for (const key of FILTERS) out[key] = loc.query.get(key) ?? "";
  return out;
}

function durationOf(e: ExecutionSummary, now: number): number {
  const start = Date.parse(e.startedAt);
  const end = e.stoppedAt ? Date.parse(e.stoppedAt) : now;
  return Math.max(0, end - start);
}

/**
 * Executions, newest first: search by name prefix; filters by state machine, status,
 * error name and start time; all kept in the URL (with the page's cursor), so a
 * filtered view can be shared and Back returns to the same page. A table on wide
 * screens, cards on narrow ones.
 */
export function ExecutionsPage({ me, loc }: { me: Me; loc: Location }) {
  const f = readFilters(loc);
  const [machines, setMachines] = useState<string[]>([]);
  const [page, setPage] = useState<Page<ExecutionSummary>>();
  const [error, setError] = useState<unknown>();
  const [search, setSearch] = useState(f.q);
  const [now, setNow] = useState(Date.now());
  const searchTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // Bumped when a bulk action ends, so the list shows its outcome without waiting.
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    api
      .get<Page<StateMachineSummary>>("/v1/state-machines", { limit: 1000 })
      .then((p) => setMachines(p.items.map((m) => m.name)))
      .catch(() => setMachines([]));
  }, []);

  // The box follows the URL (Back, a shared link), unless it is being typed in.
  useEffect(() => {
    if (searchTimer.current === undefined) setSearch(f.q);
  }, [f.q]);

  const key = FILTERS.map((k) => f[k]).join("\u0000");
  const shownKey = useRef(key);
  useEffect(() => {
    let stopped = false;
    // Another view: nothing of the last one stays on screen meanwhile.
    if (shownKey.current !== key) setPage(undefined);
    shownKey.current = key;
    const load = async () => {
      try {
        // The bulk actions send this same query (bulk/filters.ts): what is listed is what they change.
        const next = await api.get<Page<ExecutionSummary>>("/v1/executions", {
          ...listQuery(f, Date.now()),
          cursor: f.cursor,
          limit: PAGE_SIZE,
        });
        if (!stopped) {
          setPage(next);
          setNow(Date.now());
          setError(undefined);
        }
      } catch (err) {
        if (!stopped) setError(err);
      }
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [key, generation]);

  /** A filter changed: back to the first page. */
  const filter = (changes: Partial<Filters>) => {
    const next: Record<string, string> = { ...f, ...changes, cursor: "" };
    if (changes.since !== undefined && changes.since !== "custom") {
      next.from = "";
      next.to = "";
    }
    navigate(paths.executions(next), true);
  };

  const onSearch = (value: string) => {
    setSearch(value);
    if (searchTimer.current !== undefined) clearTimeout(searchTimer.current);
    searchTimer.current = setTimeout(() => {
      searchTimer.current = undefined;
      filter({ q: value.trim() });
    }, SEARCH_DELAY_MS);
  };

  const older = () => {
    const next = page?.nextCursor;
    if (!next) return;
    try {
      sessionStorage.setItem(PREVIOUS + next, f.cursor);
    } catch {
      /* private mode: Newer goes to the first page */
    }
    navigate(paths.executions({ ...f, cursor: next }));
  };
  const newer = () => {
    let previous = "";
    try {
      previous = sessionStorage.getItem(PREVIOUS + f.cursor) ?? "";
    } catch {
      previous = "";
    }
    navigate(paths.executions({ ...f, cursor: previous }));
  };
  const filtered = FILTERS.some((k) => k !== "cursor" && f[k] !== "");

  return (
    <>
      <h1>Executions</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label class="grow">
          Name starts with
          <input
            type="search"
            value={search}
            placeholder="order-"
            autoComplete="off"
            spellcheck={false}
            onInput={(e) => onSearch((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          State machine
          <select
            value={f.stateMachine}
            onChange={(e) => filter({ stateMachine: (e.target as HTMLSelectElement).value })}
          >
            <option value="">All</option>
            {[...new Set([...machines, ...(f.stateMachine ? [f.stateMachine] : [])])].map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select
            value={f.status}
            onChange={(e) => filter({ status: (e.target as HTMLSelectElement).value })}
          >
            <option value="">All</option>
            {EXECUTION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Error
          <input
            value={f.error}
            placeholder="States.Timeout"
            spellcheck={false}
            onChange={(e) => filter({ error: (e.target as HTMLInputElement).value.trim() })}
          />
        </label>
        <label>
          Started
          <select
            value={f.since}
            onChange={(e) => filter({ since: (e.target as HTMLSelectElement).value })}
          >
            <option value="">Any time</option>
            {Object.entries(SINCE).map(([k, v]) => (
              <option key={k} value={k}>
                {v.label}
              </option>
            ))}
            <option value="custom">Between…</option>
          </select>
        </label>
        {f.since === "custom" ? (
          <>
            <label>
              From
              <input
                type="datetime-local"
                value={f.from}
                onChange={(e) => filter({ from: (e.target as HTMLInputElement).value })}
              />
            </label>
            <label>
              To
              <input
                type="datetime-local"
                value={f.to}
                onChange={(e) => filter({ to: (e.target as HTMLInputElement).value })}
              />
            </label>
          </>
        ) : null}
        {filtered ? (
          <button
            type="button"
            class="small clear"
            onClick={() => {
              setSearch("");
              navigate(paths.executions({}), true);
            }}
          >
            Clear filters
          </button>
        ) : null}
      </form>
      {can(me, "executions:write") ? (
        <BulkActions filters={f} onChanged={() => setGeneration((n) => n + 1)} />
      ) : null}
      <ErrorNotice error={error} />
      {page === undefined ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : page.items.length === 0 ? (
        <p class="muted">No executions match.</p>
      ) : (
        <div class="list-box">
          <table aria-label="Executions" class="executions">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">State machine</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((e) => (
                <tr key={e.executionId} data-execution={e.executionId} data-status={e.status}>
                  <td class="cell-name">
                    <Link href={paths.execution(e.executionId)}>{e.name}</Link>
                  </td>
                  <td class="cell-status">
                    <StatusBadge status={e.status} />
                  </td>
                  <td class="cell-machine" data-label="State machine">
                    {e.stateMachine} <span class="muted">v{e.version}</span>
                  </td>
                  <td class="cell-started" data-label="Started">
                    {formatTime(e.startedAt)}
                  </td>
                  <td class="cell-duration" data-label="Duration">
                    {formatDuration(durationOf(e, now))}
                    {e.stoppedAt ? "" : " …"}
                  </td>
                  <td class="cell-error" data-label="Error">
                    {e.error ? (
                      <button
                        type="button"
                        class="link mono"
                        title="Show only executions with this error"
                        onClick={() => filter({ error: e.error! })}
                      >
                        {e.error}
                      </button>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={!f.cursor} onClick={newer}>
          Newer
        </button>
        <button type="button" disabled={!page?.nextCursor} onClick={older}>
          Older
        </button>
        {f.cursor ? (
          <button type="button" class="link" onClick={() => filter({})}>
            Newest
          </button>
        ) : null}
      </nav>
    </>
  );
}
