/**
 * How the validator agrees with the verdicts in <dir>/validation.jsonl, and whether
 * every definition of cases.jsonl and task-cases.jsonl (all run on AWS) and of
 * docs-examples.jsonl (taken from AWS's documentation) validates.
 *
 *   npx tsx scripts/conformance-validation.ts [DIR]   (default test/conformance/data)
 *
 * AWS-recorded verdicts (LocalStack snapshots without `aws_recording_unconfirmed`)
 * must all agree; the others (asl-validator's own fixtures, unconfirmed LocalStack
 * entries) weigh less, since they are not AWS's word.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { validateDefinition } from "../schema/index.js";

interface ValidationEntry {
  id: string;
  definition: unknown;
  /** The text AWS was sent when it was not a JSON object ("not a definition"). */
  definition_text?: string;
  valid: boolean;
  type?: string;
  origin?: { repo?: string };
  aws_recording_unconfirmed?: boolean;
}

interface Tally {
  agree: number;
  total: number;
  disagreements: string[];
}

export async function validationConformance(dir: string): Promise<string[]> {
  const lines: string[] = [];
  const validationFile = join(dir, "validation.jsonl");
  if (existsSync(validationFile)) {
    const aws: Tally = { agree: 0, total: 0, disagreements: [] };
    const others: Tally = { agree: 0, total: 0, disagreements: [] };
    for (const entry of readJsonl<ValidationEntry>(validationFile)) {
      const recordedByAws =
        entry.origin?.repo?.includes("localstack") === true && !entry.aws_recording_unconfirmed;
      const tally = recordedByAws ? aws : others;
      const source = entry.definition_text ?? entry.definition;
      const type = entry.type === "EXPRESS" ? "EXPRESS" : "STANDARD";
      const result = validateDefinition(source, { type });
      tally.total++;
      if (result.valid === entry.valid) {
        tally.agree++;
      } else {
        const first = result.diagnostics.find((d) => d.severity === "error");
        const why = first
          ? `${first.code} ${first.path || "/"}: ${first.message}`
          : "no diagnostics";
        tally.disagreements.push(
          `  ${entry.id}: expected ${entry.valid ? "valid" : "invalid"}, got ${result.valid ? "valid" : "invalid"} (${why})`,
        );
      }
    }
    lines.push(`validation.jsonl, AWS-recorded verdicts: ${ratio(aws)}`);
    lines.push(...aws.disagreements);
    lines.push(`validation.jsonl, other verdicts (asl-validator, unconfirmed): ${ratio(others)}`);
    lines.push(...others.disagreements);
  }
  for (const file of ["cases.jsonl", "task-cases.jsonl", "docs-examples.jsonl"]) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const tally: Tally = { agree: 0, total: 0, disagreements: [] };
    for (const entry of readJsonl<{ id: string; definition: unknown }>(path)) {
      const result = validateDefinition(entry.definition);
      tally.total++;
      if (result.valid) {
        tally.agree++;
      } else {
        const first = result.diagnostics.find((d) => d.severity === "error");
        tally.disagreements.push(
          `  ${entry.id}: ${first ? `${first.code} ${first.path}: ${first.message}` : "invalid"}`,
        );
      }
    }
    lines.push(`${file} definitions valid: ${ratio(tally)}`);
    lines.push(...tally.disagreements);
  }
  return lines;
}

function ratio(t: Tally): string {
  return `${t.agree}/${t.total} (${((100 * t.agree) / Math.max(1, t.total)).toFixed(1)}%)`;
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2] ?? resolve(import.meta.dirname, "../test/conformance/data");
  for (const line of await validationConformance(dir)) console.log(line);
}
