import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import { aslSchema } from "./asl/bundle.js";
import { isRfc3339Timestamp } from "./timestamp.js";

/**
 * The ASL schema compiled once, at module load: ajv generates the validator code a
 * single time and every validateDefinition call reuses it. `allErrors` so that one
 * run reports every problem; `verbose` so that errors carry the schema that failed
 * (ajv-diagnostics.ts reads its `description` to say what would be right).
 */
const ajv = new Ajv2020({
  allErrors: true,
  verbose: true,
  strictTypes: false,
  strictRequired: false,
  allowUnionTypes: true,
});
ajv.addFormat("asl-timestamp", { type: "string", validate: isRfc3339Timestamp });

const validate = ajv.compile(aslSchema);

/** The schema errors of a value (an empty list when it conforms). */
export function schemaErrors(value: unknown): ErrorObject[] {
  return validate(value) ? [] : [...(validate.errors ?? [])];
}
