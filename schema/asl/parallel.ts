import { exclusive, ref, type SchemaObject } from "./common.js";

/**
 * Parallel state (ASL spec, "Parallel State"): Branches is a non-empty array of
 * scopes (StartAt + States), each a state machine of its own.
 */
export const parallelState: SchemaObject = {
  allOf: [
    ref("stateBase"),
    ref("endOrTransition"),
    ref("inputOutput"),
    ref("results"),
    ref("variablesAndOutput"),
    ref("errorHandling"),
    exclusive("Parameters", "Arguments"),
  ],
  properties: {
    Type: { const: "Parallel" },
    Branches: {
      type: "array",
      minItems: 1,
      items: ref("scope"),
      description: "a non-empty array of branches, each with StartAt and States",
    },
    Parameters: ref("parameters"),
    Arguments: ref("objectOrJsonata"),
  },
  required: ["Branches"],
  unevaluatedProperties: false,
};
