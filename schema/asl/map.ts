import { exclusive, ref, type SchemaObject } from "./common.js";

/**
 * Map state (ASL spec, "Map State"; AWS "Map workflow state", inline and distributed
 * modes). `ItemProcessor` (or the legacy `Iterator`) is a scope with its own states.
 * JSONPath picks items with ItemsPath and shapes them with ItemSelector (or the
 * legacy Parameters); JSONata uses Items. Label rules live in checks/maps.ts.
 */
export const mapState: SchemaObject = {
  allOf: [
    ref("stateBase"),
    ref("endOrTransition"),
    ref("inputOutput"),
    ref("results"),
    ref("variablesAndOutput"),
    ref("errorHandling"),
    {
      anyOf: [{ required: ["ItemProcessor"] }, { required: ["Iterator"] }],
      description: "an ItemProcessor (or the legacy Iterator) with StartAt and States",
    },
    exclusive("ItemProcessor", "Iterator"),
    exclusive("ItemsPath", "Items"),
    exclusive("ItemSelector", "Parameters"),
    exclusive("MaxConcurrency", "MaxConcurrencyPath"),
    exclusive("ToleratedFailurePercentage", "ToleratedFailurePercentagePath"),
    exclusive("ToleratedFailureCount", "ToleratedFailureCountPath"),
  ],
  properties: {
    Type: { const: "Map" },
    ItemProcessor: ref("itemProcessor"),
    Iterator: ref("itemProcessor"),
    ItemsPath: ref("referencePath"),
    Items: {
      anyOf: [{ type: "array" }, ref("jsonata")],
      description: 'a JSON array, or a JSONata expression "{% ... %}"',
    },
    ItemSelector: ref("objectOrJsonata"),
    Parameters: ref("parameters"),
    MaxConcurrency: ref("countOrJsonata"),
    MaxConcurrencyPath: ref("referencePath"),
    ItemReader: ref("itemReader"),
    ItemBatcher: ref("itemBatcher"),
    ResultWriter: ref("resultWriter"),
    ToleratedFailurePercentage: ref("percentageOrJsonata"),
    ToleratedFailurePercentagePath: ref("referencePath"),
    ToleratedFailureCount: ref("countOrJsonata"),
    ToleratedFailureCountPath: ref("referencePath"),
    Label: { type: "string", description: "a string of up to 40 characters" },
  },
  unevaluatedProperties: false,
};

export const mapDefs: Record<string, SchemaObject> = {
  /** A scope plus how its iterations run (AWS: ProcessorConfig Mode / ExecutionType). */
  itemProcessor: {
    allOf: [ref("scopeFields")],
    properties: {
      ProcessorConfig: {
        type: "object",
        properties: {
          Mode: { enum: ["INLINE", "DISTRIBUTED"], description: "INLINE or DISTRIBUTED" },
          ExecutionType: { enum: ["STANDARD", "EXPRESS"], description: "STANDARD or EXPRESS" },
        },
        additionalProperties: false,
      },
    },
    unevaluatedProperties: false,
  },
  /** AWS "ItemReader (Map)": where a distributed Map reads its items. */
  itemReader: {
    type: "object",
    properties: {
      Resource: {
        type: "string",
        minLength: 1,
        description: "a resource ARN such as arn:aws:states:::s3:getObject",
      },
      ReaderConfig: {
        type: "object",
        properties: {
          InputType: { enum: ["CSV", "JSON", "JSONL", "MANIFEST", "PARQUET"] },
          CSVHeaderLocation: { enum: ["FIRST_ROW", "GIVEN"] },
          CSVHeaders: { type: "array", items: { type: "string" } },
          CSVDelimiter: { enum: ["COMMA", "PIPE", "SEMICOLON", "SPACE", "TAB"] },
          MaxItems: ref("countOrJsonata"),
          MaxItemsPath: ref("referencePath"),
        },
      },
      Parameters: ref("payloadTemplate"),
      Arguments: ref("objectOrJsonata"),
    },
    required: ["Resource"],
    additionalProperties: false,
  },
  /** AWS "ItemBatcher (Map)". */
  itemBatcher: {
    type: "object",
    properties: {
      MaxItemsPerBatch: ref("countOrJsonata"),
      MaxItemsPerBatchPath: ref("referencePath"),
      MaxInputBytesPerBatch: ref("countOrJsonata"),
      MaxInputBytesPerBatchPath: ref("referencePath"),
      BatchInput: ref("objectOrJsonata"),
    },
    additionalProperties: false,
  },
  /** AWS "ResultWriter (Map)". */
  resultWriter: {
    type: "object",
    properties: {
      Resource: {
        type: "string",
        minLength: 1,
        description: "a resource ARN such as arn:aws:states:::s3:putObject",
      },
      Parameters: ref("payloadTemplate"),
      Arguments: ref("objectOrJsonata"),
      WriterConfig: { type: "object" },
    },
    additionalProperties: false,
  },
};
