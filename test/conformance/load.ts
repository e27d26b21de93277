import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseCases, type TestCase } from "../../engine/testing/cases.js";

/** The AWS-recorded conformance data beside the repository (`../shared/conformance`). */
export const CONFORMANCE_DIR = resolve(import.meta.dirname, "../../../shared/conformance");

export function loadCases(file: "cases.jsonl" | "task-cases.jsonl"): TestCase[] {
  const path = join(CONFORMANCE_DIR, file);
  if (!existsSync(path)) throw new Error(`conformance data missing: ${path}`);
  return parseCases(readFileSync(path, "utf8"));
}
