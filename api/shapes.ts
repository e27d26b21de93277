import type {
  approvalDecision,
  approvalRecord,
  busEvent,
  errorBody,
  executionDetail,
  executionRecord,
  executionSummary,
  historyEvent,
  listOf,
  me,
  modelBudget,
  page,
  pendingTask,
  putEventsAnswer,
  rule,
  schedule,
  scheduleBackfill,
  stateMachineDetail,
  stateMachineSummary,
} from "./response-schemas.js";

/**
 * The TypeScript types of what the REST API answers, derived from the JSON Schemas
 * that validate and serialize it (api/response-schemas.ts, served through
 * api/schemas.ts): a field added, dropped or made optional there changes these types,
 * and every reader compiled against them (the console, the plugins) with them.
 *
 * Types only: this module and what it imports emit no JavaScript, so the console
 * takes them with `import type` and its bundle holds nothing of the server.
 *
 * `FromSchema` reads the keywords these response schemas use (`type`, also a list
 * such as ["string", "null"]; `enum`; `const`; `properties` and `required`; `items`;
 * `additionalProperties`; `patternProperties` anchored literal text such as
 * `EventDetails$`); the others (`format`, `pattern`, `minimum`, `description`, …) do
 * not change the type. A schema without `type` (`{}`) is any JSON value.
 *
 * It reads a schema as a description of what is *sent*, not of what is accepted: an
 * object without `additionalProperties` is closed, since fast-json-stringify sends only
 * the properties a response schema declares. So a misspelt field fails to compile
 * instead of reading as `unknown` (as a general JSON Schema reading, such as
 * json-schema-to-ts's, would have it).
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The type of the values a (response) JSON Schema admits. */
export type FromSchema<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly type: infer T }
      ? T extends readonly (infer U)[]
        ? OfType<U, S>
        : OfType<T, S>
      : Json;

type OfType<T, S> = T extends "string"
  ? string
  : T extends "integer" | "number"
    ? number
    : T extends "boolean"
      ? boolean
      : T extends "null"
        ? null
        : T extends "array"
          ? S extends { readonly items: infer I }
            ? FromSchema<I>[]
            : Json[]
          : T extends "object"
            ? ObjectOf<S>
            : never;

type PropertiesOf<S> = S extends { readonly properties: infer P } ? P : {};
type RequiredOf<S> = S extends { readonly required: readonly (infer K)[] } ? K : never;

type ObjectOf<S, P = PropertiesOf<S>, R = RequiredOf<S>> = Flat<
  { -readonly [K in keyof P as K extends R ? K : never]: FromSchema<P[K]> } & {
    -readonly [K in keyof P as K extends R ? never : K]?: FromSchema<P[K]>;
  } & AdditionalOf<S> &
    PatternedOf<S>
>;

type AdditionalOf<S> = S extends { readonly additionalProperties: infer A }
  ? A extends true
    ? { [key: string]: Json }
    : A extends false
      ? {}
      : { [key: string]: FromSchema<A> }
  : {};

type PatternedOf<S> = S extends { readonly patternProperties: infer PP }
  ? { -readonly [K in keyof PP & string as KeyOfPattern<K>]: FromSchema<PP[K]> }
  : {};

/** Regular-expression syntax: a pattern holding any of these is not plain text. */
type RegexSyntax =
  "\\" | "." | "*" | "+" | "?" | "(" | ")" | "[" | "]" | "{" | "}" | "|" | "^" | "$";
type Plain<L extends string> = L extends `${string}${RegexSyntax}${string}` ? false : true;

/** The property names a pattern of anchored plain text matches (`X$`: ending in X); else any. */
type KeyOfPattern<P extends string> = P extends `^${infer L}$`
  ? Plain<L> extends true
    ? L
    : string
  : P extends `^${infer L}`
    ? Plain<L> extends true
      ? `${L}${string}`
      : string
    : P extends `${infer L}$`
      ? Plain<L> extends true
        ? `${string}${L}`
        : string
      : string;

/** One object type instead of an intersection, for readable hovers and messages. */
type Flat<T> = { [K in keyof T]: T[K] } & {};

/** An execution as `GET /v1/executions/:id` without `pendingTasks`, and as the writes answer it. */
export type ExecutionRecord = FromSchema<typeof executionRecord>;
/** A listing's item (`GET /v1/executions`). */
export type ExecutionSummary = FromSchema<typeof executionSummary>;
/** `GET /v1/executions/:id`. */
export type ExecutionDetail = FromSchema<typeof executionDetail>;
export type ExecutionStatus = ExecutionRecord["status"];
export type PendingTask = FromSchema<typeof pendingTask>;
export type ModelBudget = FromSchema<typeof modelBudget>;
/** `GET /v1/executions/:id/history`'s items. */
export type HistoryEvent = FromSchema<typeof historyEvent>;

export type StateMachineSummary = FromSchema<typeof stateMachineSummary>;
export type StateMachineDetail = FromSchema<typeof stateMachineDetail>;

export type ApprovalRecord = FromSchema<typeof approvalRecord>;
export type ApprovalDecision = FromSchema<typeof approvalDecision>;
export type ApprovalStatus = ApprovalRecord["status"];

/** `GET /v1/me`. */
export type Me = FromSchema<typeof me>;
export type Scope = Me["scope"];
export type Permission = Me["permissions"][number];

/** Every error answer (4xx, 5xx). */
export type ErrorBody = FromSchema<typeof errorBody>;

/** What `page(items)` answers, its items of type T. */
export type Page<T> = {
  [K in keyof PageEnvelope]: K extends "items" ? T[] : PageEnvelope[K];
};
type PageEnvelope = FromSchema<ReturnType<typeof page<{}>>>;

/** What `listOf(items)` answers (a whole list, no cursor), its items of type T. */
export type List<T> = {
  [K in keyof ListEnvelope]: K extends "items" ? T[] : ListEnvelope[K];
};
type ListEnvelope = FromSchema<ReturnType<typeof listOf<{}>>>;

/** `/v1/schedules/:name`. */
export type Schedule = FromSchema<typeof schedule>;
/** `POST /v1/schedules/:name/backfill`. */
export type ScheduleBackfill = FromSchema<typeof scheduleBackfill>;
/** `/v1/rules/:name`. */
export type EventRule = FromSchema<typeof rule>;
/** `GET /v1/events`'s items. */
export type BusEvent = FromSchema<typeof busEvent>;
/** `POST /v1/events`. */
export type PutEventsAnswer = FromSchema<typeof putEventsAnswer>;
