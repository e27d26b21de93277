import type { Catcher } from "../core/definition.js";
import { errorMatches } from "./errors-match.js";

/** The first catcher whose `ErrorEquals` matches the error, if any (ASL spec, "Fallback states"). */
export function findCatcher(
  catchers: readonly Catcher[] | undefined,
  error: string,
): Catcher | undefined {
  return catchers?.find((c) => errorMatches(c.ErrorEquals, error));
}
