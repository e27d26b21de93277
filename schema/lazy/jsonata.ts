import jsonata from "jsonata";

/**
 * The `jsonata` package, whose parser checks the JSONata expressions of definitions
 * (schema/jsonata.ts): only machines that use JSONata need it, so the built CLI
 * bundles it apart (dist/cli/lazy-jsonata.cjs) and loads it on the first call
 * (scripts/build.ts, lazyModules). Here, run from the sources, an ordinary import.
 */
export function load(): typeof jsonata {
  return jsonata;
}
