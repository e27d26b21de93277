import type { Json } from "../api/types.js";

/**
 * The start form's input, checked with JSON.parse before anything is sent; the
 * parser's own words say where it broke. An empty box means `{}` (the API's default).
 */
export function parseInput(
  text: string,
): { ok: true; value: Json } | { ok: false; message: string } {
  if (text.trim() === "") return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch (err) {
    return { ok: false, message: `The input is not valid JSON: ${(err as Error).message}` };
  }
}
