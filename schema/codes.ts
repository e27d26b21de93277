/**
 * The one registry of diagnostic codes. Codes are stable: tests, the CLI and the REST
 * API match on them, so a code is never renamed, only added. Where AWS's
 * ValidateStateMachineDefinition has a code for the same problem we use AWS's name
 * (API reference, "ValidateStateMachineDefinitionDiagnostic": SCHEMA_VALIDATION_FAILED,
 * INVALID_JSON_DESCRIPTION, MISSING_TRANSITION_TARGET, …); the rest are ours.
 */
export type Severity = "error" | "warning";

interface CodeInfo {
  readonly severity: Severity;
  /** What the code means, for documentation and `--help` style listings. */
  readonly summary: string;
  /** Whether AWS uses the same code name. */
  readonly aws: boolean;
}

function code(severity: Severity, summary: string, aws = false): CodeInfo {
  return { severity, summary, aws };
}

export const CODES = {
  // --- Reading the source ---------------------------------------------------------
  MISSING_DESCRIPTION: code("error", "The definition is empty or null.", true),
  UNREADABLE_FILE: code("error", "The definition file cannot be read (CLI)."),
  INVALID_JSON_DESCRIPTION: code("error", "The JSON text does not parse.", true),
  INVALID_YAML_DESCRIPTION: code("error", "The YAML text does not parse."),
  DEFINITION_TOO_LARGE: code("error", "The definition is larger than 1 MiB."),
  NOT_TEXT: code("error", "The definition is binary data, not UTF-8 text."),
  DUPLICATE_KEY: code("error", "An object has the same key twice."),
  TOO_DEEPLY_NESTED: code("error", "The definition nests objects or arrays too deeply.", true),
  EXCESSIVE_ALIASES: code("error", "YAML aliases expand beyond the allowed count."),
  NOT_JSON: code("error", "The definition holds a value JSON cannot represent."),
  NOT_AN_OBJECT: code("error", "The definition is not a JSON object."),

  UNRESOLVED_PLACEHOLDER: code(
    "warning",
    "A ${Name} placeholder (SAM DefinitionSubstitutions, CDK, Terraform) is not filled in; checks that need its value are skipped.",
  ),

  // --- Shape (JSON Schema) ----------------------------------------------------------
  SCHEMA_VALIDATION_FAILED: code(
    "error",
    "A field is missing, unknown or of the wrong type.",
    true,
  ),
  MISPLACED_FIELD: code(
    "error",
    "A field of the definition (QueryLanguage, Comment, TimeoutSeconds…) is written inside States.",
  ),
  MUTUALLY_EXCLUSIVE_FIELDS: code("error", "Two fields that exclude each other are both set."),

  // --- Transitions and scopes -------------------------------------------------------
  INVALID_START_AT: code("error", "StartAt names no state of its scope."),
  MISSING_TRANSITION_TARGET: code(
    "error",
    "Next, Default or a Catch Next names no state of its scope.",
    true,
  ),
  MISSING_NEXT_OR_END: code("error", "A state that must transition has neither Next nor End."),
  NEXT_AND_END: code("error", "A state has both Next and End."),
  UNREACHABLE_STATE: code("error", "No path from StartAt leads to the state."),
  MISSING_END_STATE: code("error", "A scope has no terminal state.", true),
  NO_PATH_TO_END: code(
    "warning",
    "From this state no terminal state can be reached (endless loop).",
  ),
  DUPLICATE_STATE_NAME: code(
    "error",
    "Two states share a name anywhere in the state machine.",
    true,
  ),
  INVALID_STATE_NAME: code("error", "A state name is empty or longer than 80 characters.", true),

  // --- Errors, Retry and Catch ------------------------------------------------------
  STATES_ALL_NOT_ALONE: code("error", "States.ALL shares its ErrorEquals with other names."),
  STATES_ALL_NOT_LAST: code("error", "A retrier or catcher with States.ALL is not the last one."),
  // A warning, not an error: AWS accepts any "States." name in ErrorEquals
  // (States.QuorumMet, States.TaskFailedId in public definitions); a catcher for a
  // name nothing raises is dead code, not an invalid definition.
  UNKNOWN_STATES_ERROR: code(
    "warning",
    "An error name starting with 'States.' is not predefined: no state raises it.",
  ),

  // --- Query languages --------------------------------------------------------------
  QUERY_LANGUAGE_DOWNGRADE: code("error", "A state uses JSONPath in a JSONata state machine."),
  JSONPATH_FIELD_IN_JSONATA_STATE: code(
    "error",
    "A JSONPath-only field appears in a JSONata state.",
  ),
  JSONATA_FIELD_IN_JSONPATH_STATE: code(
    "error",
    "A JSONata-only field appears in a JSONPath state.",
  ),
  JSONATA_IN_JSONPATH_STATE: code(
    "error",
    "A JSONata expression is used where a JSONPath state needs a value.",
  ),
  JSONATA_TEXT_IN_JSONPATH_PAYLOAD: code(
    "warning",
    'A payload template of a JSONPath state (Parameters, ResultSelector, ItemSelector, Result) holds a "{% %}" string, which JSONPath passes on as literal text.',
  ),
  INVALID_JSONATA: code(
    "error",
    "A JSONata expression does not compile, or its {% %} delimiters are broken.",
  ),

  // --- Paths and intrinsic functions --------------------------------------------------
  INVALID_JSONPATH: code("error", "A JSONPath does not parse."),
  INVALID_REFERENCE_PATH: code(
    "error",
    "A field that needs a reference path holds another kind of path.",
  ),
  INVALID_PATH_FIELD: code("error", "A key ending '.$' holds no path or intrinsic function call."),
  INVALID_INTRINSIC_FUNCTION: code(
    "error",
    "An intrinsic function call does not parse, exist or fit its arity.",
  ),
  DUPLICATE_PAYLOAD_FIELD: code("error", "A payload template has both 'x' and 'x.$'."),
  NO_DOLLAR: code(
    "warning",
    "A value looks like a path or intrinsic call but its key does not end in '.$'.",
    true,
  ),
  NO_PATH: code(
    "warning",
    "A value looks like a path but the field name does not end with 'Path'.",
    true,
  ),
  PASS_RESULT_IS_STATIC: code(
    "warning",
    "A Pass state's Result uses a path, which is never evaluated.",
    true,
  ),

  // --- Task, Wait, Map ----------------------------------------------------------------
  INVALID_RESOURCE: code(
    "error",
    "A Task Resource is not a URI or names an unknown service integration.",
    true,
  ),
  UNKNOWN_SERVICE_INTEGRATION: code(
    "warning",
    "A Task Resource names a service Stepwise does not know.",
  ),
  INVALID_APPROVAL_FIELD: code(
    "error",
    "An approval task (stepwise:approval) misses 'Subject' or has a field that is unknown or of the wrong type.",
  ),
  INVALID_MODEL_ARGUMENT: code(
    "error",
    "A model task (stepwise:model) misses 'Messages', names an unknown argument, or has a static argument of the wrong type (an Endpoint that is a URL).",
  ),
  UNKNOWN_MODEL_ERROR: code(
    "warning",
    "A Retry or Catch names a Model.* error that no model task raises (a misspelling never matches).",
  ),
  UNSERVED_RESOURCE: code(
    "warning",
    "No task runner of this service calls the Resource: accepted, as AWS accepts it, but an execution reaching it fails with States.TaskFailed.",
  ),
  UNSUPPORTED_IN_EXPRESS: code(
    "error",
    "An Express state machine uses an integration pattern it does not support.",
  ),
  HEARTBEAT_NOT_BELOW_TIMEOUT: code(
    "error",
    "HeartbeatSeconds is not smaller than TimeoutSeconds.",
  ),
  INVALID_TIMESTAMP: code("error", "A timestamp is not an RFC 3339 date-time."),
  DISTRIBUTED_MAP_OUTER_VARIABLE: code(
    "warning",
    "A state inside a Distributed Map's ItemProcessor reads a variable that only states outside the Map assign: its child workflows see only their own variables.",
  ),
  INVALID_LABEL_NAME: code(
    "error",
    "A Map Label is empty, too long or has a forbidden character.",
    true,
  ),
  DUPLICATE_LABEL_NAME: code("error", "Two Map states share a Label.", true),
  INVALID_CHOICE_RULE: code(
    "error",
    "A Choice rule has no comparison, several, or misses its Variable.",
  ),
} as const satisfies Record<string, CodeInfo>;

export type DiagnosticCode = keyof typeof CODES;

export function severityOf(code: DiagnosticCode): Severity {
  return CODES[code].severity;
}
