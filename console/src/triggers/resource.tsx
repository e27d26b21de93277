import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client.js";
import { Link } from "../components/Link.js";
import { ErrorNotice } from "../components/misc.js";
import { navigate } from "../router.js";

/**
 * What the trigger pages (schedules, rules, events) share: a list re-read while it
 * is shown, one named resource read by its path, its deletion, and the states a
 * page shows before its data is there. Each page keeps only its own table and facts.
 */

/** `load` now and every `everyMs` while mounted (again when `deps` change): its last answer or error. */
export function usePolled<T>(
  load: () => Promise<T>,
  everyMs: number,
  deps: unknown[] = [],
): { value: T | undefined; error: unknown } {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stopped = false;
    const read = async () => {
      try {
        const answer = await load();
        if (!stopped) {
          setValue(answer);
          setError(undefined);
        }
      } catch (err) {
        if (!stopped) setError(err);
      }
    };
    void read();
    const timer = setInterval(() => void read(), everyMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, deps);
  return { value, error };
}

/** One resource (`GET path`), read again when the path changes; `set` keeps a newer copy (a PUT's answer). */
export function useNamed<T>(path: string) {
  const [value, set] = useState<T>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    set(undefined);
    api.get<T>(path).then(set, setError);
  }, [path]);
  return { value, set, error, setError };
}

/** Asks `question`; if confirmed, deletes `path` and goes to `back`. Throws the API's refusal. */
export async function deleteThenLeave(path: string, question: string, back: string) {
  if (!confirm(question)) return;
  await api.delete(path);
  navigate(back);
}

/**
 * A list's place on its page: loading, the error, the empty text, or the table of
 * the items (cards on a phone), one row each, under the column names.
 */
export function ListTable<T>(props: {
  items: T[] | undefined;
  error: unknown;
  empty: ComponentChildren;
  label: string;
  class: string;
  columns: string[];
  row: (item: T) => ComponentChildren;
}) {
  const { items, error } = props;
  return (
    <>
      <ErrorNotice error={error} />
      {items === undefined ? (
        error ? null : (
          <p class="muted">Loading…</p>
        )
      ) : items.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <div class="list-box">
          <table aria-label={props.label} class={`cards ${props.class}`}>
            <thead>
              <tr>
                {props.columns.map((c) => (
                  <th scope="col" key={c}>
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{items.map(props.row)}</tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** A resource's page before the resource is read: its title, loading or the error, the way back. */
export function NotYet(props: { title: string; error: unknown; back: string; backText: string }) {
  return (
    <>
      <h1>{props.title}</h1>
      {props.error ? <ErrorNotice error={props.error} /> : <p class="muted">Loading…</p>}
      <p>
        <Link href={props.back}>{props.backText}</Link>
      </p>
    </>
  );
}
