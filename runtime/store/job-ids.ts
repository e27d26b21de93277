/**
 * Follow-up jobs: what a commit (or a claim of due timers, a callback, a resume)
 * asks to be enqueued, as the scripts return it and as a run hash keeps it in
 * `fx`. One text per job, space-separated in a list:
 *   `s<run>@<seq>`  the transition job of a run at a seq (queue `steps`)
 *   `k<task>`       the call of a pending task (queue `tasks`)
 * Run and task ids never contain a space (ids.ts). The formats are written here
 * once and injected into the Lua source (store/lua/prelude.ts).
 */
export const JOB_ID = { step: "s", task: "k", seq: "@" } as const;

export type FollowUp = { kind: "step"; run: string; seq: number } | { kind: "task"; task: string };

export function stepJob(run: string, seq: number | string): string {
  return `${JOB_ID.step}${run}${JOB_ID.seq}${seq}`;
}

export function taskJob(task: string): string {
  return `${JOB_ID.task}${task}`;
}

/** The jobs of a follow-up list (`fx`); text that names no job is skipped. */
export function parseJobs(list: string | null | undefined): FollowUp[] {
  const jobs: FollowUp[] = [];
  for (const entry of (list ?? "").split(" ")) {
    const job = parseJob(entry);
    if (job) jobs.push(job);
  }
  return jobs;
}

export function parseJob(entry: string): FollowUp | undefined {
  if (entry.startsWith(JOB_ID.step)) {
    const at = entry.lastIndexOf(JOB_ID.seq);
    if (at < 0) return undefined;
    return { kind: "step", run: entry.slice(1, at), seq: Number(entry.slice(at + 1)) };
  }
  if (entry.startsWith(JOB_ID.task) && entry.length > 1)
    return { kind: "task", task: entry.slice(1) };
  return undefined;
}
