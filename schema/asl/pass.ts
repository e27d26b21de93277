import { ref, type SchemaObject } from "./common.js";

/**
 * Pass state (ASL spec, "Pass State"; AWS "Pass workflow state"). JSONPath: Result,
 * ResultPath, Parameters, InputPath/OutputPath. JSONata: Output. Both: Assign.
 */
export const passState: SchemaObject = {
  allOf: [ref("stateBase"), ref("endOrTransition"), ref("inputOutput"), ref("variablesAndOutput")],
  properties: {
    Type: { const: "Pass" },
    Result: true,
    ResultPath: ref("nullableReferencePath"),
    Parameters: ref("parameters"),
  },
  unevaluatedProperties: false,
};
