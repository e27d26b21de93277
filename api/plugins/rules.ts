import type { FastifyPluginAsync } from "fastify";
import {
  RULE_NAME_PATTERN,
  type RuleDefinition,
  type RuleInput,
} from "../../runtime/triggers/events/rule-record.js";
import { nameSchema, rule } from "../schemas.js";
import type { EventRule } from "../shapes.js";
import type { PluginOptions } from "../server.js";
import { ALIAS_PATTERN, namedResourceRoutes } from "./named-resources.js";

/**
 * Event rules (runtime/triggers/): an EventBridge event pattern and the state
 * machine a matching event on the bus (`POST /v1/events`) starts, once per event:
 * the execution is named `<rule>-<event id>`. The answer's schema is
 * api/response-schemas.ts's; the request adds its limits to those fields here.
 */

const fields = rule.properties;
const target = fields.target.properties;

const ruleBody = {
  type: "object",
  required: ["eventPattern", "target"],
  additionalProperties: false,
  properties: {
    eventPattern: { type: "object", description: fields.eventPattern.description },
    target: {
      type: "object",
      required: ["stateMachine"],
      additionalProperties: false,
      properties: {
        ...target,
        stateMachine: nameSchema,
        version: { ...target.version, minimum: 1 },
        alias: { ...target.alias, pattern: ALIAS_PATTERN },
        inputPath: { ...target.inputPath, maxLength: 256 },
      },
    },
    state: fields.state,
    description: { ...fields.description, maxLength: 512 },
  },
} as const;

export const rulesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  namedResourceRoutes<RuleInput, RuleDefinition>(app, runtime, {
    path: "/rules",
    noun: "event rule",
    tags: ["events"],
    name: { type: "string", pattern: RULE_NAME_PATTERN },
    body: ruleBody,
    answer: rule,
    store: (triggers) => triggers.rules,
  });
};

type Assert<T extends true> = T;
/** What the store answers fits the schema that serializes it. */
export type RuleAnswerFits = Assert<RuleDefinition extends EventRule ? true : false>;
