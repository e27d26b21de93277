import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { aslSchema } from "./asl/bundle.js";
import { isRfc3339Timestamp } from "./timestamp.js";

/**
 * The ASL schema, compiled by ajv on first use and reused by every later
 * validateDefinition call. Not at module load: compiling it costs ~200 ms of CPU, which
 * every `stepwise` process that imports the API (a worker, a CLI command) would pay
 * without validating anything. `allErrors` so that one run reports every problem;
 * `verbose` so that errors carry the schema that failed (ajv-diagnostics.ts reads its
 * `description` to say what would be right). `validateSchema: false`: checking our own
 * schema against JSON Schema's meta-schema at every start cost another ~100 ms;
 * test/schema/meta-schema.test.ts checks it once, in the suite.
 */
let validate: ValidateFunction | undefined;

/** How the ASL schema is compiled, here and ahead of time for the bundle (scripts/build.ts). */
export const ASL_AJV_OPTIONS = {
  allErrors: true,
  verbose: true,
  strictTypes: false,
  strictRequired: false,
  allowUnionTypes: true,
} as const;

export function compileAslSchema(options: { validateSchema: boolean }): ValidateFunction {
  const ajv = new Ajv2020({ ...ASL_AJV_OPTIONS, validateSchema: options.validateSchema });
  ajv.addFormat("asl-timestamp", { type: "string", validate: isRfc3339Timestamp });
  return ajv.compile(aslSchema);
}

/** The schema errors of a value (an empty list when it conforms). */
export function schemaErrors(value: unknown): ErrorObject[] {
  validate ??= compileAslSchema({ validateSchema: false });
  return validate(value) ? [] : [...(validate.errors ?? [])];
}
