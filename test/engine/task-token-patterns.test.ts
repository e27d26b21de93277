import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json, JsonObject } from "../../engine/core/json.js";
import { validateDefinition } from "../../schema/index.js";
import { counterNonce, execute } from "./helpers.js";

/**
 * `$$.Task.Token` and the service integration patterns (issue #36).
 *
 * AWS Developer Guide, "Discover service integration patterns in Step Functions"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/connect-to-resource.html),
 * "Wait for a Callback with the Task Token": "When you specify a resource using
 * `.waitForTaskToken`, the task token can be accessed in the "Parameters" field of
 * your state definition with a special path designation (`$$.Task.Token`)". Run a
 * Job (`.sync`, `.sync:2`) and Request Response get no token: the context object of
 * such a task has no `Task.Token`, so a path to it references nothing and the state
 * fails with States.Runtime, as any path to a missing node does. A resource that
 * both starts a job and waits for a token is spelled `.waitForTaskToken`
 * (`states:startExecution.waitForTaskToken`): that one has the token.
 */
const CHILD = "arn:aws:states:us-east-1:123456789012:stateMachine:child";

function startChild(resource: string): StateMachineDefinition & JsonObject {
  return {
    StartAt: "T",
    States: {
      T: {
        Type: "Task",
        Resource: resource,
        Parameters: {
          StateMachineArn: CHILD,
          Input: { "token.$": "$$.Task.Token", "who.$": "$.who" },
        },
        End: true,
      },
    },
  };
}

describe("$$.Task.Token by integration pattern", () => {
  it("the definitions are valid whatever the pattern (AWS checks no context paths at create)", () => {
    for (const suffix of ["", ".sync", ".sync:2", ".waitForTaskToken"]) {
      const result = validateDefinition(
        startChild(`arn:aws:states:::states:startExecution${suffix}`),
      );
      expect(result.valid).toBe(true);
    }
  });

  it(".waitForTaskToken passes the task's token, which the callback answers", async () => {
    const resource = "arn:aws:states:::states:startExecution.waitForTaskToken";
    const seen: Json[] = [];
    const r = await execute(startChild(resource), {
      input: { who: "ann" },
      nonce: counterNonce("tok"),
      tasks: {
        [resource]: (input, invocation) => {
          seen.push(input);
          // The request's token is the one the Parameters saw.
          expect((input as { Input: { token: string } }).Input.token).toBe(invocation.taskToken);
          return { answered: true };
        },
      },
    });
    expect(r.status).toBe("SUCCEEDED");
    expect(seen).toEqual([{ StateMachineArn: CHILD, Input: { token: "tok-0", who: "ann" } }]);
    expect(r.output).toEqual({ answered: true });
  });

  it.each([
    ["Run a Job (.sync)", "arn:aws:states:::states:startExecution.sync"],
    ["Run a Job (.sync:2)", "arn:aws:states:::states:startExecution.sync:2"],
    ["Request Response", "arn:aws:states:::states:startExecution"],
  ])("%s has no token: the path fails the state with States.Runtime", async (_name, resource) => {
    let called = false;
    const r = await execute(startChild(resource), {
      input: { who: "ann" },
      tasks: {
        [resource]: () => {
          called = true;
          return {};
        },
      },
    });
    expect(called).toBe(false);
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.Runtime");
    expect(r.cause).toContain("The JSONPath '$$.Task.Token' specified for the field 'token.$'");
  });

  it("JSONata: $states.context.Task.Token is there for .waitForTaskToken only", async () => {
    const machine = (resource: string): StateMachineDefinition & JsonObject => ({
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: resource,
          Arguments: {
            StateMachineArn: CHILD,
            Input: {
              token: "{% $states.context.Task.Token %}",
              has: "{% $exists($states.context.Task) %}",
            },
          },
          End: true,
        },
      },
    });
    const seen: Json[] = [];
    const tasks = {
      "arn:aws:states:::states:startExecution.waitForTaskToken": (input: Json) => {
        seen.push(input);
        return {};
      },
      "arn:aws:states:::states:startExecution.sync": (input: Json) => {
        seen.push(input);
        return {};
      },
    };
    await execute(machine("arn:aws:states:::states:startExecution.waitForTaskToken"), {
      nonce: counterNonce("tok"),
      tasks,
    });
    const sync = await execute(machine("arn:aws:states:::states:startExecution.sync"), { tasks });
    expect(seen).toEqual([{ StateMachineArn: CHILD, Input: { token: "tok-0", has: true } }]);
    // An expression that yields nothing fails the field (AWS: States.QueryEvaluationError).
    expect(sync.status).toBe("FAILED");
    expect(sync.error).toBe("States.QueryEvaluationError");
    expect(sync.cause).toContain(
      "The JSONata expression '$states.context.Task.Token' specified for the field 'Arguments/Input/token' returned nothing (undefined).",
    );
  });
});
