import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client.js";
import { followApprovals } from "../api/live.js";
import { can } from "../api/me.js";
import type { Approval, Me, Page } from "../api/types.js";
import { inMyInbox } from "./human.js";
import { applyChange, inboxOrder } from "./inbox.js";

/** Pages of the pending list read at most (10,000 approvals): an inbox, not an archive. */
const MAX_PAGES = 10;
/**
 * The stream starts at "now", so a change between the first read and the stream's
 * start would be missed: a slow re-read closes that gap (and any other).
 */
const RELOAD_MS = 60_000;

async function fetchPending(me: Me): Promise<Approval[]> {
  const out: Approval[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await api.get<Page<Approval>>("/v1/approvals", {
      status: "PENDING",
      limit: 1000,
      cursor,
    });
    // Theirs to decide and not decided by them yet: after the first of two approvals,
    // it leaves the inbox of the one who decided.
    out.push(...page.items.filter((a) => inMyInbox(me, a)));
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  return out.sort(inboxOrder);
}

export interface PendingApprovals {
  pending: Approval[] | undefined;
  error: unknown;
  reload: () => void;
}

/**
 * The PENDING approvals this key may decide, kept live: the navigation's badge and
 * the inbox read the same list, so they never disagree.
 */
export function usePendingApprovals(me: Me): PendingApprovals {
  const [pending, setPending] = useState<Approval[]>();
  const [error, setError] = useState<unknown>();
  const generation = useRef(0);
  const enabled = can(me, "approvals:read");

  const reload = useCallback(() => {
    if (!enabled) return;
    const mine = ++generation.current;
    fetchPending(me).then(
      (list) => {
        if (mine !== generation.current) return;
        setPending(list);
        setError(undefined);
      },
      (err: unknown) => {
        if (mine === generation.current) setError(err);
      },
    );
  }, [me, enabled]);

  useEffect(() => {
    if (!enabled) return;
    reload();
    const controller = new AbortController();
    followApprovals((change) => {
      if (change === null) return reload();
      // A stream event is the record as it is now: apply it without a round trip.
      generation.current++;
      setPending((list) =>
        list === undefined
          ? list
          : inMyInbox(me, change.approval)
            ? applyChange(list, change.approval)
            : list.filter((a) => a.approvalId !== change.approval.approvalId),
      );
    }, controller.signal).catch(() => undefined);
    const timer = setInterval(reload, RELOAD_MS);
    return () => {
      controller.abort();
      clearInterval(timer);
    };
  }, [me, enabled, reload]);

  return { pending, error, reload };
}
