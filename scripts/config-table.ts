/**
 * Writes README.md's table of environment variables from config/variables.ts, the
 * one catalogue the configuration module reads (test/config/readme-table.test.ts
 * holds the two equal). `npx tsx scripts/config-table.ts` rewrites the table between
 * its markers; prettier then pads it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { VARIABLES } from "../config/variables.js";

export const BEGIN =
  "<!-- variables: written by scripts/config-table.ts from config/variables.ts -->";
export const END = "<!-- variables end -->";

export function renderTable(): string {
  return [
    "| variable | default | meaning |",
    "| --- | --- | --- |",
    ...VARIABLES.map((v) => `| \`${v.name}\` | ${v.default} | ${v.doc} |`),
  ].join("\n");
}

/** The rows of the README's table: [name, default, meaning], cells trimmed. */
export function readmeRows(readme: string): string[][] {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start)
    throw new Error("README.md has no table of variables between its markers");
  return readme
    .slice(start + BEGIN.length, end)
    .split("\n")
    .filter((line) => line.startsWith("|"))
    .slice(2)
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = fileURLToPath(new URL("../README.md", import.meta.url));
  const readme = readFileSync(path, "utf8");
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error("README.md has no markers for the table");
  const next = `${readme.slice(0, start + BEGIN.length)}\n\n${renderTable()}\n\n${readme.slice(end)}`;
  // The repository's .prettierrc (printWidth 100), or prettier reflows the rest of README.
  const options = (await resolveConfig(path)) ?? {};
  writeFileSync(path, await format(next, { ...options, filepath: path }));
  console.log(`README.md: ${VARIABLES.length} variables`);
}
