import { describe, expect, it } from "vitest";
import { describeResource, scheduledRegion } from "../../../engine/states/task-history.js";

/**
 * How TaskScheduled names an AWS task, as AWS's histories do: the optimized
 * integrations by service and action, `aws-sdk:<service>` as the type of an SDK
 * integration, and the region the call goes to (the resource's own, else the
 * deployment's, read from the state machine's ARN); what runs here stays `local`.
 */
const MACHINE = "arn:aws:states:eu-central-1:123456789012:stateMachine:orders";

describe("TaskScheduled for AWS resources", () => {
  it.each([
    ["arn:aws:states:::lambda:invoke", "lambda", "invoke", "eu-central-1"],
    [
      "arn:aws:states:::lambda:invoke.waitForTaskToken",
      "lambda",
      "invoke.waitForTaskToken",
      "eu-central-1",
    ],
    ["arn:aws:states:::dynamodb:putItem", "dynamodb", "putItem", "eu-central-1"],
    ["arn:aws:states:::aws-sdk:s3:getObject", "aws-sdk:s3", "getObject", "eu-central-1"],
    ["arn:aws:states:us-west-2::sqs:sendMessage", "sqs", "sendMessage", "us-west-2"],
    ["arn:aws:states:::stepwise:approval", "stepwise", "approval", "local"],
    ["function:charge", "function", "charge", "local"],
  ])("%s: %s, %s, %s", (resource, resourceType, name, region) => {
    expect(describeResource(resource)).toEqual({ resourceType, resource: name });
    expect(scheduledRegion(resource, MACHINE)).toBe(region);
  });
});
