import type { Catcher, State } from "../core/definition.js";
import type { Json } from "../core/json.js";
import type { StepContext } from "../step-context.js";
import { jsonataLanguage } from "./jsonata-language.js";
import { jsonPathLanguage } from "./jsonpath-language.js";
import type { LanguageIO } from "./language.js";

export type { LanguageIO, NumericField } from "./language.js";

/** The data handling of `state`'s query language (its own, else the top level's). */
export function io(ctx: StepContext, state: State): LanguageIO {
  return ctx.language(state) === "JSONata" ? jsonataLanguage : jsonPathLanguage;
}

export function catchOutput(
  ctx: StepContext,
  state: State,
  catcher: Catcher,
  raw: Json,
  errorOutput: Json,
): Json {
  return io(ctx, state).catchOutput(ctx, state, catcher, raw, errorOutput);
}
