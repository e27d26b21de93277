import { ref, type SchemaObject } from "./common.js";

/**
 * Wait state (ASL spec, "Wait State"): exactly one of Seconds, SecondsPath, Timestamp
 * and TimestampPath. JSONata states may compute Seconds and Timestamp with "{% %}".
 */
export const waitState: SchemaObject = {
  allOf: [
    ref("stateBase"),
    ref("endOrTransition"),
    ref("inputOutput"),
    ref("variablesAndOutput"),
    {
      oneOf: [
        { required: ["Seconds"] },
        { required: ["SecondsPath"] },
        { required: ["Timestamp"] },
        { required: ["TimestampPath"] },
      ],
      description: "exactly one of Seconds, SecondsPath, Timestamp or TimestampPath",
    },
  ],
  properties: {
    Type: { const: "Wait" },
    Seconds: ref("secondsOrJsonata"),
    SecondsPath: ref("referencePath"),
    Timestamp: ref("timestampOrJsonata"),
    TimestampPath: ref("referencePath"),
  },
  unevaluatedProperties: false,
};
