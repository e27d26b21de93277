import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError } from "../api/client.js";
import type { Me, Permission } from "../api/types.js";

/** Small shared pieces: status badges, times, error notices. */

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status.toLowerCase().replace(/_/g, "-")}`}>{status}</span>;
}

export function formatTime(iso: string | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A duration for people: "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min", "3 d 4 h". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.floor(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
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

/** What an API call's failure says: the API's error code and message, else the error's message. */
export function errorText(error: unknown): string {
  return error instanceof ApiError
    ? `${error.code}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
}

/** A labelled text input (the action forms' reason, error and cause). */
export function TextField(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  placeholder?: string;
}) {
  return (
    <label>
      {props.label}
      <input
        value={props.value}
        {...(props.placeholder !== undefined ? { placeholder: props.placeholder } : {})}
        onInput={(e) => props.onValue((e.target as HTMLInputElement).value)}
      />
    </label>
  );
}

export function ErrorNotice({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const text = errorText(error);
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

/** The scopes that grant a permission (api/auth.ts), for the words of a refusal. */
const GRANTED_BY: Partial<Record<Permission, string>> = {
  "executions:read": "admin or run",
  "executions:write": "admin or run",
  "definitions:read": "admin or run",
  "definitions:write": "admin",
  "approvals:read": "admin or approve",
  "approvals:decide": "admin or approve",
};

/** Whether an error is the API's 403: the page says so once and stops loading. */
export function isForbidden(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403;
}

/** What this key may not see, and what it would need: said once, nothing loads after it. */
export function Forbidden({ me, need, what }: { me: Me; need: Permission; what: string }) {
  return (
    <p class="notice error forbidden" role="alert" data-forbidden={need}>
      <strong>Not allowed:</strong> this API key
      {me.name ? ` (${me.name}, scope ${me.scope})` : ` (scope ${me.scope})`} may not {what}. That
      needs the <code>{need}</code> permission
      {GRANTED_BY[need] ? `, which keys of scope ${GRANTED_BY[need]} have` : ""}.
    </p>
  );
}
