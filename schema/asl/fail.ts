import { exclusive, ref, type SchemaObject } from "./common.js";

/**
 * Fail state (ASL spec, "Fail State"): terminal, no input/output processing. Error
 * and Cause are strings (JSONata states may compute them with "{% %}"); ErrorPath and
 * CausePath (JSONPath states) hold a reference path or an intrinsic function call.
 */
export const failState: SchemaObject = {
  allOf: [ref("stateBase"), exclusive("Error", "ErrorPath"), exclusive("Cause", "CausePath")],
  properties: {
    Type: { const: "Fail" },
    Error: { type: "string", description: "an error name" },
    ErrorPath: {
      type: "string",
      minLength: 1,
      description: "a reference path or an intrinsic function call",
    },
    Cause: { type: "string", description: "a text" },
    CausePath: {
      type: "string",
      minLength: 1,
      description: "a reference path or an intrinsic function call",
    },
  },
  unevaluatedProperties: false,
};
