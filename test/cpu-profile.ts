import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";

/**
 * vitest setup file: with STEPWISE_TEST_PROFILE_CPU set (scripts/test-profile.ts sets
 * it), each test file appends the CPU used while it ran — by its worker process and by
 * the processes it spawned and reaped (the stepwise binaries, Chromium) — so the
 * profile shows where the suite's CPU goes, not only its wall time. Differences of
 * /proc/self/stat taken around the file, as a worker runs many files one after another
 * (and the first file's figure includes the worker's start). Linux only; elsewhere
 * nothing is written.
 */
const out = process.env.STEPWISE_TEST_PROFILE_CPU;

/** [own CPU, reaped children's CPU] of this process so far, in ms. */
function cpuTimes(): [number, number] | undefined {
  let stat: string;
  try {
    stat = readFileSync("/proc/self/stat", "utf8");
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces): utime is field 14.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = (i: number): number => Number(fields[i - 3]) * 10; // clock ticks of 10 ms
  return [ticks(14) + ticks(15), ticks(16) + ticks(17)];
}

/** What the worker had used before this file began; a worker's first file counts from 0. */
let before: [number, number] = [0, 0];
const workerFiles = ((
  globalThis as { __stepwiseProfiledFiles?: number }
).__stepwiseProfiledFiles ??= 0);

if (out !== undefined) {
  beforeAll(() => {
    if (workerFiles > 0) before = cpuTimes() ?? [0, 0];
  });
  afterAll(() => {
    (globalThis as { __stepwiseProfiledFiles?: number }).__stepwiseProfiledFiles = workerFiles + 1;
    const now = cpuTimes();
    if (now === undefined) return;
    const file = relative(process.cwd(), expect.getState().testPath ?? "");
    const line = { file, selfMs: now[0] - before[0], childrenMs: now[1] - before[1] };
    appendFileSync(out, JSON.stringify(line) + "\n");
  });
}
