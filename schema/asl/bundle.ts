import { choiceDefs, choiceState } from "./choice.js";
import { commonDefs, ref, type SchemaObject } from "./common.js";
import { failState } from "./fail.js";
import { mapDefs, mapState } from "./map.js";
import { parallelState } from "./parallel.js";
import { passState } from "./pass.js";
import { succeedState } from "./succeed.js";
import { taskDefs, taskState } from "./task.js";
import { waitState } from "./wait.js";

/**
 * The whole ASL schema: the partials of each state type bundled with the shared
 * `$defs` into one JSON Schema (draft 2020-12, for `unevaluatedProperties`, which lets
 * partials composed with allOf still refuse unknown fields). Compiled once by
 * ../compile.ts.
 */
export const STATE_TYPES = [
  "Pass",
  "Task",
  "Choice",
  "Wait",
  "Succeed",
  "Fail",
  "Parallel",
  "Map",
] as const;

const STATE_SCHEMAS: Record<(typeof STATE_TYPES)[number], SchemaObject> = {
  Pass: passState,
  Task: taskState,
  Choice: choiceState,
  Wait: waitState,
  Succeed: succeedState,
  Fail: failState,
  Parallel: parallelState,
  Map: mapState,
};

/** A state: dispatch on Type, so errors come only from the schema of the state's own type. */
const state: SchemaObject = {
  type: "object",
  required: ["Type"],
  properties: {
    Type: { enum: [...STATE_TYPES], description: listTypes() },
  },
  allOf: STATE_TYPES.map((type) => ({
    if: { properties: { Type: { const: type } }, required: ["Type"] },
    then: ref(`${type.toLowerCase()}State`),
  })),
};

export const ASL_SCHEMA_ID = "https://stepwise.dev/schemas/asl.json";

export const aslSchema: SchemaObject = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: ASL_SCHEMA_ID,
  title: "Amazon States Language state machine",
  type: "object",
  properties: {
    StartAt: ref("stateName"),
    States: ref("states"),
    Comment: ref("comment"),
    Version: { enum: ["1.0"], description: '"1.0"' },
    TimeoutSeconds: ref("positiveSeconds"),
    QueryLanguage: ref("queryLanguage"),
  },
  required: ["StartAt", "States"],
  additionalProperties: false,
  $defs: {
    ...commonDefs,
    ...taskDefs,
    ...choiceDefs,
    ...mapDefs,
    state,
    states: {
      type: "object",
      additionalProperties: ref("state"),
      description: "an object of named states",
    },
    /** A scope: the top level, a Parallel branch, a Map ItemProcessor (ASL spec, "Parallel State"). */
    scopeFields: {
      type: "object",
      properties: {
        StartAt: ref("stateName"),
        States: ref("states"),
        Comment: ref("comment"),
        QueryLanguage: ref("queryLanguage"),
      },
      required: ["StartAt", "States"],
    },
    scope: { allOf: [ref("scopeFields")], unevaluatedProperties: false },
    ...Object.fromEntries(
      STATE_TYPES.map((type) => [`${type.toLowerCase()}State`, STATE_SCHEMAS[type]]),
    ),
  },
};

function listTypes(): string {
  return `one of ${STATE_TYPES.slice(0, -1).join(", ")} or ${STATE_TYPES[STATE_TYPES.length - 1]}`;
}
