import type { JsonObject } from "../../engine/core/json.js";
import type { Diagnostic } from "../diagnostic.js";
import { checkChoiceRules } from "./choice-rules.js";
import { checkDistributedMapVariables } from "./distributed-variables.js";
import { checkErrorNames } from "./error-names.js";
import { checkJsonataExpressions } from "./jsonata-expressions.js";
import { checkMaps } from "./maps.js";
import { buildModel, type MachineType, type Model } from "./model.js";
import { checkPayloads } from "./payloads.js";
import { checkPaths } from "./paths.js";
import { checkQueryLanguages } from "./query-language.js";
import { checkApprovals } from "./approvals.js";
import { checkModelTasks } from "./models.js";
import { checkServed, checkTasks } from "./tasks.js";
import { checkTransitions } from "./transitions.js";

export type { MachineType } from "./model.js";

/** The checks a JSON Schema cannot make; each is a pure function of the model. */
const CHECKS: readonly ((model: Model) => Diagnostic[])[] = [
  checkTransitions,
  checkErrorNames,
  checkQueryLanguages,
  checkChoiceRules,
  checkPaths,
  checkPayloads,
  checkJsonataExpressions,
  checkTasks,
  checkApprovals,
  checkModelTasks,
  checkMaps,
  checkDistributedMapVariables,
];

export function semanticDiagnostics(
  definition: JsonObject,
  machineType: MachineType,
  serves?: (resource: string) => boolean,
): Diagnostic[] {
  const model = buildModel(definition, machineType);
  const out = CHECKS.flatMap((check) => check(model));
  return serves ? [...out, ...checkServed(model, serves)] : out;
}
