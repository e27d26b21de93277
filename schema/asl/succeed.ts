import { ref, type SchemaObject } from "./common.js";

/**
 * Succeed state (ASL spec, "Succeed State"): terminal, so no Next/End. AWS allows
 * InputPath/OutputPath (JSONPath) and Output (JSONata), but not Assign.
 */
export const succeedState: SchemaObject = {
  allOf: [ref("stateBase"), ref("inputOutput")],
  properties: {
    Type: { const: "Succeed" },
    Output: true,
  },
  unevaluatedProperties: false,
};
