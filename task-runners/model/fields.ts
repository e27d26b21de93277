/**
 * The model task's names, in a module with no I/O so the validator (schema/) can
 * share them: the resource spellings, its argument fields, and its error names.
 */
export const MODEL_RESOURCES: ReadonlySet<string> = new Set([
  "stepwise:model",
  "arn:aws:states:::stepwise:model",
]);

export const MODEL_ARGUMENTS = [
  "Model",
  "Messages",
  "Tools",
  "ToolChoice",
  "Temperature",
  "MaxTokens",
  "ResponseFormat",
  "Endpoint",
] as const;

/** `Endpoint` names a configured endpoint; a URL there would invite a key beside it. */
export const URL_PATTERN = /^[a-z][a-z0-9+.-]*:\/\//i;
