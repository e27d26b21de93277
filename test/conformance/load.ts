import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseCases, type TestCase } from "../../engine/testing/cases.js";

/**
 * The AWS-recorded conformance data, copied into the repository (see
 * `data/README.md` for where it came from) so that a fresh clone tests itself.
 */
export const CONFORMANCE_DIR = resolve(import.meta.dirname, "data");

export type ConformanceFile =
  | "cases.jsonl"
  | "task-cases.jsonl"
  | "docs-examples.jsonl"
  | "validation.jsonl"
  | "histories.jsonl";

/** The execution files: two recorded on AWS, one taken from AWS's documentation. */
export const EXECUTION_FILES = ["cases.jsonl", "task-cases.jsonl", "docs-examples.jsonl"] as const;
export type ExecutionFile = (typeof EXECUTION_FILES)[number];

/** The text of one data file; missing data fails the suite rather than emptying it. */
export function readConformanceFile(file: ConformanceFile): string {
  const path = join(CONFORMANCE_DIR, file);
  if (!existsSync(path)) throw new Error(`conformance data missing: ${path}`);
  return readFileSync(path, "utf8");
}

export function loadCases(file: ExecutionFile): TestCase[] {
  return parseCases(readConformanceFile(file));
}
