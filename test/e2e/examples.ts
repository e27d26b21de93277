import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** Reads an example from definitions/ as text (YAML or JSON), as a user would POST it. */
export async function example(file: string): Promise<string> {
  return readFile(fileURLToPath(new URL(`../../definitions/${file}`, import.meta.url)), "utf8");
}
