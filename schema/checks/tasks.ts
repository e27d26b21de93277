import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { describeResource } from "../integrations.js";
import { child } from "../pointer.js";
import type { Model } from "./model.js";

/**
 * Resources this service cannot call (no task runner handles them): AWS accepts any
 * resource ARN at creation, so this is a warning naming the resource, not an error.
 */
export function checkServed(model: Model, serves: (resource: string) => boolean): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    if (state.type !== "Task" || typeof state.node.Resource !== "string") continue;
    const resource = state.node.Resource;
    if (describeResource(resource).kind === "invalid" || serves(resource)) continue;
    out.push(
      diagnostic(
        "UNSERVED_RESOURCE",
        `No task runner of this service calls '${resource}': an execution reaching this state fails with States.TaskFailed unless a worker with such a runner serves it`,
        child(state.pointer, "Resource"),
      ),
    );
  }
  return out;
}

/**
 * Task states: the Resource is a URI and, for AWS service integrations, a known one;
 * Express state machines support neither .sync nor .waitForTaskToken nor activities
 * (AWS "Standard vs. Express workflows": "Express Workflows do not support … Job-run
 * (.sync) or Callback (.waitForTaskToken) service integration patterns … activities");
 * HeartbeatSeconds must be smaller than TimeoutSeconds (ASL spec, "Task State").
 */
export function checkTasks(model: Model): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const state of model.states) {
    if (state.type !== "Task") continue;
    const { node, pointer } = state;
    const at = child(pointer, "Resource");
    if (typeof node.Resource === "string") {
      const info = describeResource(node.Resource);
      if (info.kind === "invalid") {
        out.push(
          diagnostic(
            "INVALID_RESOURCE",
            `The resource provided ${node.Resource} ${info.problem}`,
            at,
          ),
        );
      } else if (info.kind === "integration" && !info.known) {
        out.push(
          diagnostic(
            "UNKNOWN_SERVICE_INTEGRATION",
            `'${info.service}' is not a service integration Stepwise knows; check the service name, or use arn:aws:states:::aws-sdk:${info.service}:${info.action}`,
            at,
          ),
        );
      }
      if (model.machineType === "EXPRESS") {
        if (info.kind === "integration" && info.pattern !== "request-response") {
          const suffix = info.pattern === "sync" ? ".sync" : ".waitForTaskToken";
          out.push(
            diagnostic(
              "UNSUPPORTED_IN_EXPRESS",
              `Express state machine does not support '${suffix}' service integration; use a STANDARD state machine or the request-response form`,
              at,
            ),
          );
        } else if (info.kind === "activity") {
          out.push(
            diagnostic(
              "UNSUPPORTED_IN_EXPRESS",
              "Express state machine does not support activities",
              at,
            ),
          );
        }
      }
    }
    const timeout = node.TimeoutSeconds;
    const heartbeat = node.HeartbeatSeconds;
    if (typeof timeout === "number" && typeof heartbeat === "number" && heartbeat >= timeout) {
      out.push(
        diagnostic(
          "HEARTBEAT_NOT_BELOW_TIMEOUT",
          `HeartbeatSeconds (${heartbeat}) must be smaller than TimeoutSeconds (${timeout})`,
          child(pointer, "HeartbeatSeconds"),
        ),
      );
    }
  }
  return out;
}
