/**
 * Shared `$defs` of the ASL JSON Schema, composed by the per-state partials the way
 * AWS's own schema (amazon-states-language-service, src/json-schema/partial/
 * common.json) composes them: end-or-transition, input/output, results, Retry, Catch,
 * JSONata strings, seconds and timestamps.
 *
 * Fields hold the union of what the two query languages accept (a number or a
 * `{% %}` expression); which one a state may use depends on its query language,
 * which is inherited through scopes, so `checks/query-language.ts` enforces it.
 *
 * `description` texts are read back by `ajv-diagnostics.ts` to say what a value
 * should be, so they are phrased as "a … such as …".
 */
export type SchemaObject = Record<string, unknown>;

export const ref = (name: string): SchemaObject => ({ $ref: `#/$defs/${name}` });

/** `a` and `b` may not both be present (read by ajv-diagnostics.ts for its message). */
export const exclusive = (a: string, b: string): SchemaObject => ({ not: { required: [a, b] } });

/** AWS: "MUST be a positive integer … maximum 99999999" (TimeoutSeconds and friends). */
export const MAX_SECONDS = 99999999;

/** A JSONata template: the whole string is `{% expression %}` (AWS, "Transforming data with JSONata"). */
export const JSONATA_PATTERN = "^\\{%[\\s\\S]*%\\}$";

const JSONATA_ALTERNATIVE = 'or a JSONata expression "{% ... %}"';

export const commonDefs: Record<string, SchemaObject> = {
  jsonata: {
    type: "string",
    pattern: JSONATA_PATTERN,
    description: 'a JSONata expression "{% ... %}"',
  },
  queryLanguage: { enum: ["JSONPath", "JSONata"], description: "JSONPath or JSONata" },
  comment: { type: "string", description: "a string" },
  stateName: { type: "string", minLength: 1, description: "the name of a state" },

  // --- Paths (syntax is checked by checks/paths.ts, which knows the state's language) --
  path: { type: "string", minLength: 1, description: "a JSONPath such as $.field" },
  nullablePath: {
    anyOf: [ref("path"), { type: "null" }],
    description: "a JSONPath such as $.field, or null",
  },
  referencePath: { type: "string", minLength: 1, description: "a reference path such as $.field" },
  nullableReferencePath: {
    anyOf: [ref("referencePath"), { type: "null" }],
    description: "a reference path such as $.field, or null",
  },

  // --- Numbers that JSONata states may compute --------------------------------------
  seconds: { type: "integer", minimum: 0, maximum: MAX_SECONDS },
  positiveSeconds: { type: "integer", minimum: 1, maximum: MAX_SECONDS },
  secondsOrJsonata: {
    anyOf: [ref("seconds"), ref("jsonata")],
    description: `a whole number of seconds from 0 to ${MAX_SECONDS}, ${JSONATA_ALTERNATIVE}`,
  },
  positiveSecondsOrJsonata: {
    anyOf: [ref("positiveSeconds"), ref("jsonata")],
    description: `a whole number of seconds from 1 to ${MAX_SECONDS}, ${JSONATA_ALTERNATIVE}`,
  },
  countOrJsonata: {
    anyOf: [{ type: "integer", minimum: 0 }, ref("jsonata")],
    description: `a whole number of at least 0, ${JSONATA_ALTERNATIVE}`,
  },
  percentageOrJsonata: {
    anyOf: [{ type: "number", minimum: 0, maximum: 100 }, ref("jsonata")],
    description: `a number from 0 to 100, ${JSONATA_ALTERNATIVE}`,
  },

  // --- Timestamps (ASL spec, "Timestamps": RFC 3339, uppercase T and Z) -----------------
  timestamp: {
    type: "string",
    format: "asl-timestamp",
    description: "an RFC 3339 timestamp such as 2016-03-14T01:59:00Z",
  },
  timestampOrJsonata: {
    anyOf: [ref("timestamp"), ref("jsonata")],
    description: `an RFC 3339 timestamp such as 2016-03-14T01:59:00Z, ${JSONATA_ALTERNATIVE}`,
  },

  // --- Payloads ------------------------------------------------------------------------
  /** ASL spec, "Payload Template": a JSON object (keys ending ".$" hold paths). */
  payloadTemplate: { type: "object", description: "a JSON object (payload template)" },
  /**
   * A state's `Parameters`: a payload template, or a JSON array of values (objects in
   * it are payload templates, their ".$" keys evaluated). AWS accepts the array form at
   * create and runs it; deployed definitions (serverless patterns) use it.
   */
  parameters: {
    type: ["object", "array"],
    description: "a JSON object (payload template) or a JSON array",
  },
  /** JSONata `Arguments`: an object whose strings may hold expressions, or one expression. */
  objectOrJsonata: {
    anyOf: [{ type: "object" }, ref("jsonata")],
    description: `a JSON object, ${JSONATA_ALTERNATIVE}`,
  },
  assign: { type: "object", description: "an object mapping variable names to values" },

  // --- Retry and Catch (ASL spec, "Error Handling") -------------------------------------
  errorEquals: {
    type: "array",
    minItems: 1,
    items: { type: "string", minLength: 1, description: "an error name" },
    description: 'a non-empty array of error names such as ["States.ALL"]',
  },
  retrier: {
    type: "object",
    properties: {
      ErrorEquals: ref("errorEquals"),
      IntervalSeconds: {
        ...commonSeconds(1),
        description: `a whole number of seconds from 1 to ${MAX_SECONDS}`,
      },
      MaxAttempts: {
        type: "integer",
        minimum: 0,
        maximum: MAX_SECONDS,
        description: "a whole number of at least 0",
      },
      BackoffRate: { type: "number", minimum: 1, description: "a number of at least 1.0" },
      MaxDelaySeconds: {
        type: "integer",
        minimum: 1,
        maximum: 31622400,
        description: "a whole number of seconds from 1 to 31622400 (a year)",
      },
      JitterStrategy: { enum: ["FULL", "NONE"], description: "FULL or NONE" },
      Comment: ref("comment"),
    },
    required: ["ErrorEquals"],
    additionalProperties: false,
  },
  catcher: {
    type: "object",
    properties: {
      ErrorEquals: ref("errorEquals"),
      Next: ref("stateName"),
      ResultPath: ref("nullableReferencePath"),
      Output: true,
      Assign: ref("assign"),
      Comment: ref("comment"),
    },
    required: ["ErrorEquals", "Next"],
    additionalProperties: false,
  },
  retry: { type: "array", items: ref("retrier"), description: "an array of retriers" },
  catch: { type: "array", items: ref("catcher"), description: "an array of catchers" },

  // --- Partials that state schemas compose with allOf -----------------------------------
  stateBase: {
    type: "object",
    properties: {
      Type: { type: "string" },
      Comment: ref("comment"),
      QueryLanguage: ref("queryLanguage"),
    },
    required: ["Type"],
  },
  /** Next or End; which one is present is checked by checks/transitions.ts for a clearer message. */
  endOrTransition: {
    properties: { Next: ref("stateName"), End: { type: "boolean", description: "true or false" } },
  },
  inputOutput: {
    properties: { InputPath: ref("nullablePath"), OutputPath: ref("nullablePath") },
  },
  results: {
    properties: {
      ResultPath: ref("nullableReferencePath"),
      ResultSelector: ref("payloadTemplate"),
    },
  },
  /** Assign (both languages) and Output (JSONata). */
  variablesAndOutput: {
    properties: { Assign: ref("assign"), Output: true },
  },
  errorHandling: {
    properties: { Retry: ref("retry"), Catch: ref("catch") },
  },
};

function commonSeconds(minimum: number): SchemaObject {
  return { type: "integer", minimum, maximum: MAX_SECONDS };
}
