import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError } from "../api/client.js";

/** Small shared pieces: status badges, times, error notices. */

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status.toLowerCase().replace(/_/g, "-")}`}>{status}</span>;
}

export function formatTime(iso: string | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Re-renders every `ms` (clocks, "time left"). */
export function useNow(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function ErrorNotice({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const text =
    error instanceof ApiError
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
  return (
    <p class="notice error" role="alert">
      {text}
    </p>
  );
}

export function Section(props: { title: string; children: ComponentChildren; id?: string }) {
  return (
    <section class="card" aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.children}
    </section>
  );
}
