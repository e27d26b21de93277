/**
 * What api/ may import from runtime/: the data types (records.ts), the `Runtime`
 * interface the REST API calls (runtime.ts) and the errors it throws (errors.ts).
 * Importers name this index; the three files are how it is kept readable.
 */
export * from "./records.js";
export * from "./runtime.js";
export * from "./errors.js";
