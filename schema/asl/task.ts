import { exclusive, ref, type SchemaObject } from "./common.js";

/**
 * Task state (ASL spec, "Task State"; AWS "Task workflow state"). Resource is checked
 * further, and HeartbeatSeconds < TimeoutSeconds, by checks/tasks.ts.
 */
export const taskState: SchemaObject = {
  allOf: [
    ref("stateBase"),
    ref("endOrTransition"),
    ref("inputOutput"),
    ref("results"),
    ref("variablesAndOutput"),
    ref("errorHandling"),
    exclusive("TimeoutSeconds", "TimeoutSecondsPath"),
    exclusive("HeartbeatSeconds", "HeartbeatSecondsPath"),
    exclusive("Parameters", "Arguments"),
  ],
  properties: {
    Type: { const: "Task" },
    Resource: { type: "string", minLength: 1, description: "a URI such as an ARN" },
    Parameters: ref("parameters"),
    Arguments: ref("objectOrJsonata"),
    TimeoutSeconds: ref("positiveSecondsOrJsonata"),
    TimeoutSecondsPath: ref("referencePath"),
    HeartbeatSeconds: ref("positiveSecondsOrJsonata"),
    HeartbeatSecondsPath: ref("referencePath"),
    Credentials: ref("credentials"),
  },
  required: ["Resource"],
  unevaluatedProperties: false,
};

/**
 * AWS "Task state" → Credentials: `RoleArn` (a string, or "{% %}" in JSONata) or
 * `RoleArn.$` (a path, JSONPath). AWS refuses `{}` ("The field 'RoleArn' is required").
 */
export const taskDefs: Record<string, SchemaObject> = {
  credentials: {
    type: "object",
    properties: {
      RoleArn: { type: "string", minLength: 1, description: "an IAM role ARN" },
      "RoleArn.$": { type: "string", minLength: 1, description: "a JSONPath to the role ARN" },
    },
    additionalProperties: false,
    anyOf: [{ required: ["RoleArn"] }, { required: ["RoleArn.$"] }],
    description: "the field RoleArn (or RoleArn.$ holding a path)",
  },
};
