import type { Json, JsonObject } from "./json.js";

/**
 * The shape of an ASL definition after it passed the validator. The engine trusts
 * these types; `schema/` is what makes them true. States are a union discriminated
 * on `Type`, as in AWS's own schema (amazon-states-language-service).
 */
export type QueryLanguage = "JSONPath" | "JSONata";

export interface StateMachineDefinition {
  StartAt: string;
  States: Record<string, State>;
  Comment?: string;
  Version?: string;
  TimeoutSeconds?: number;
  QueryLanguage?: QueryLanguage;
}

/** A scope of states: the top level, a Parallel branch or a Map processor. */
export interface StateScope {
  StartAt: string;
  States: Record<string, State>;
  QueryLanguage?: QueryLanguage;
}

interface Common {
  Comment?: string;
  QueryLanguage?: QueryLanguage;
  /** JSONPath: `$`-paths; JSONata: ignored (refused by the validator). */
  InputPath?: string | null;
  OutputPath?: string | null;
  /** JSONata only. */
  Output?: Json;
  Assign?: JsonObject;
}

interface Transition {
  Next?: string;
  End?: boolean;
}

export interface Retrier {
  ErrorEquals: string[];
  IntervalSeconds?: number;
  MaxAttempts?: number;
  BackoffRate?: number;
  MaxDelaySeconds?: number;
  JitterStrategy?: "FULL" | "NONE";
  Comment?: string;
}

export interface Catcher {
  ErrorEquals: string[];
  Next: string;
  ResultPath?: string | null;
  Output?: Json;
  Assign?: JsonObject;
  Comment?: string;
}

export interface PassState extends Common, Transition {
  Type: "Pass";
  Result?: Json;
  ResultPath?: string | null;
  Parameters?: Json;
}

export interface TaskState extends Common, Transition {
  Type: "Task";
  Resource: string;
  Parameters?: Json;
  Arguments?: Json;
  ResultSelector?: JsonObject;
  ResultPath?: string | null;
  TimeoutSeconds?: number | string;
  TimeoutSecondsPath?: string;
  HeartbeatSeconds?: number | string;
  HeartbeatSecondsPath?: string;
  Retry?: Retrier[];
  Catch?: Catcher[];
  Credentials?: JsonObject;
}

/** A Choice rule: a comparison, a combination (And/Or/Not) or a JSONata Condition. */
export type ChoiceRule = JsonObject & { Next?: string; Condition?: Json; Variable?: string };

export interface ChoiceState extends Common {
  Type: "Choice";
  Choices: ChoiceRule[];
  Default?: string;
}

export interface WaitState extends Common, Transition {
  Type: "Wait";
  Seconds?: number | string;
  SecondsPath?: string;
  Timestamp?: string;
  TimestampPath?: string;
}

export interface SucceedState extends Common {
  Type: "Succeed";
}

export interface FailState {
  Type: "Fail";
  Comment?: string;
  QueryLanguage?: QueryLanguage;
  Error?: string;
  ErrorPath?: string;
  Cause?: string;
  CausePath?: string;
}

export interface ParallelState extends Common, Transition {
  Type: "Parallel";
  Branches: StateScope[];
  Parameters?: Json;
  Arguments?: Json;
  ResultSelector?: JsonObject;
  ResultPath?: string | null;
  Retry?: Retrier[];
  Catch?: Catcher[];
}

export interface ItemProcessor extends StateScope {
  ProcessorConfig?: { Mode?: "INLINE" | "DISTRIBUTED"; ExecutionType?: "STANDARD" | "EXPRESS" };
}

export interface MapState extends Common, Transition {
  Type: "Map";
  ItemProcessor?: ItemProcessor;
  /** The legacy name of ItemProcessor (ProcessorConfig included, as AWS accepts it). */
  Iterator?: ItemProcessor;
  ItemsPath?: string;
  Items?: Json;
  ItemSelector?: Json;
  Parameters?: Json;
  MaxConcurrency?: number | string;
  MaxConcurrencyPath?: string;
  ItemReader?: JsonObject;
  ItemBatcher?: JsonObject;
  ResultWriter?: JsonObject;
  ResultSelector?: JsonObject;
  ResultPath?: string | null;
  ToleratedFailurePercentage?: number | string;
  ToleratedFailurePercentagePath?: string;
  ToleratedFailureCount?: number | string;
  ToleratedFailureCountPath?: string;
  Label?: string;
  Retry?: Retrier[];
  Catch?: Catcher[];
}

export type State =
  | PassState
  | TaskState
  | ChoiceState
  | WaitState
  | SucceedState
  | FailState
  | ParallelState
  | MapState;

export type StateType = State["Type"];
