import { isJsonObject, type Json } from "../../engine/core/json.js";
import { CHOICE_OPERATORS } from "../asl/choice.js";
import { diagnostic, listNames, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { objectItems, type Model, type StateInfo } from "./model.js";

/**
 * Choice rules (ASL spec, "Choice Rules"): a JSONPath rule is exactly one comparison
 * (Variable plus one operator from the operator table) or exactly one of And, Or and
 * Not, which take no Variable; a JSONata rule is a Condition.
 */
const COMBINATOR_SET: ReadonlySet<string> = new Set(["And", "Or", "Not"]);

export function checkChoiceRules(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    if (state.type !== "Choice") continue;
    for (const [i, rule] of objectItems(state.node.Choices)) {
      const pointer = child(state.pointer, "Choices", i);
      if (state.language === "JSONata") {
        if (rule.Condition === undefined) {
          out.push(
            diagnostic(
              "INVALID_CHOICE_RULE",
              `Choice rule ${i} of state '${state.name}' needs "Condition": "{% ... %}" (the state uses JSONata)`,
              pointer,
            ),
          );
        }
      } else {
        checkJsonPathRule(state, rule, pointer, out);
      }
    }
  }
  return out;
}

function checkJsonPathRule(
  state: StateInfo,
  root: Json,
  rootPointer: string,
  out: Diagnostic[],
): void {
  const stack: [Json, string][] = [[root, rootPointer]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [rule, pointer] = item;
    if (!isJsonObject(rule)) continue;
    const keys = Object.keys(rule);
    const operators = keys.filter((name) => CHOICE_OPERATORS[name] !== undefined);
    const combinators = keys.filter((name) => COMBINATOR_SET.has(name));
    const all = [...combinators, ...operators];
    const where = `The Choice rule at ${pointer.slice(state.pointer.length + 1)} of state '${state.name}'`;
    if (all.length === 0) {
      if (!("Condition" in rule)) {
        out.push(
          diagnostic(
            "INVALID_CHOICE_RULE",
            `${where} has no comparison; give it a Variable and an operator such as StringEquals or IsPresent, or combine rules with And, Or or Not`,
            pointer,
          ),
        );
      }
    } else if (all.length > 1) {
      out.push(
        diagnostic(
          "INVALID_CHOICE_RULE",
          `${where} has ${all.length} operators (${listNames(all)}); a rule has exactly one, combine several with And or Or`,
          pointer,
        ),
      );
    } else if (operators.length === 1 && rule.Variable === undefined) {
      out.push(
        diagnostic(
          "INVALID_CHOICE_RULE",
          `${where} uses ${operators[0]} but has no Variable to compare`,
          pointer,
        ),
      );
    } else if (combinators.length === 1 && rule.Variable !== undefined) {
      out.push(
        diagnostic(
          "INVALID_CHOICE_RULE",
          `${where} combines rules with ${combinators[0]}, which takes no Variable; move the Variable into the nested rules`,
          child(pointer, "Variable"),
        ),
      );
    }
    if (Array.isArray(rule.And))
      rule.And.forEach((r, i) => stack.push([r, child(pointer, "And", i)]));
    if (Array.isArray(rule.Or)) rule.Or.forEach((r, i) => stack.push([r, child(pointer, "Or", i)]));
    if (rule.Not !== undefined) stack.push([rule.Not, child(pointer, "Not")]);
  }
}
