/**
 * Task `Resource` URIs (ASL spec, "Task State": "a URI, especially an ARN that
 * uniquely identifies the specific task to execute"), and the AWS service
 * integrations Stepwise knows (AWS "Integrating services with Step Functions",
 * optimized integrations). AWS refuses an unknown action of a known service with
 * "The resource provided … is not recognized" (e.g. dynamodb:query, which exists
 * only as the AWS SDK integration aws-sdk:dynamodb:query).
 */
const OPTIMIZED: Readonly<Record<string, readonly string[]>> = {
  apigateway: ["invoke"],
  athena: ["startQueryExecution", "stopQueryExecution", "getQueryExecution", "getQueryResults"],
  batch: ["submitJob"],
  bedrock: ["invokeModel", "createModelCustomizationJob"],
  codebuild: [
    "startBuild",
    "stopBuild",
    "batchDeleteBuilds",
    "batchGetReports",
    "startBuildBatch",
    "stopBuildBatch",
    "retryBuildBatch",
    "deleteBuildBatch",
  ],
  databrew: ["startJobRun"],
  dynamodb: ["getItem", "putItem", "updateItem", "deleteItem"],
  ecs: ["runTask"],
  eks: [
    "createCluster",
    "deleteCluster",
    "createFargateProfile",
    "deleteFargateProfile",
    "createNodegroup",
    "deleteNodegroup",
    "runJob",
    "call",
  ],
  elasticmapreduce: [
    "createCluster",
    "terminateCluster",
    "addStep",
    "cancelStep",
    "setClusterTerminationProtection",
    "modifyInstanceFleetByName",
    "modifyInstanceGroupByName",
  ],
  "emr-containers": ["createVirtualCluster", "deleteVirtualCluster", "startJobRun"],
  "emr-serverless": [
    "createApplication",
    "startApplication",
    "stopApplication",
    "deleteApplication",
    "startJobRun",
    "cancelJobRun",
  ],
  events: ["putEvents"],
  glue: ["startJobRun"],
  http: ["invoke"],
  lambda: ["invoke"],
  mediaconvert: ["createJob"],
  sagemaker: [
    "createEndpoint",
    "createEndpointConfig",
    "createHyperParameterTuningJob",
    "createLabelingJob",
    "createModel",
    "createProcessingJob",
    "createTrainingJob",
    "createTransformJob",
    "updateEndpoint",
  ],
  sns: ["publish"],
  sqs: ["sendMessage"],
  states: ["startExecution"],
  // Stepwise's own: an approval bound to an envelope, a plain park on a task token,
  // a chat-completions model call (task-runners/model/), a wait for a bus event
  // (runtime/triggers/events/event-waits.ts).
  stepwise: ["approval", "waitForTaskToken", "model", "waitForEvent"],
};

/** Integration patterns (AWS "Discover service integration patterns"). */
export type IntegrationPattern = "request-response" | "sync" | "callback";

export type ResourceInfo =
  | { kind: "invalid"; problem: string }
  | {
      kind: "integration";
      service: string;
      action: string;
      pattern: IntegrationPattern;
      known: boolean;
    }
  | { kind: "activity" }
  | { kind: "uri" };

const URI = /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/;
const SERVICE_ARN = /^arn:aws[a-z-]*:states:::(.+)$/;
const ACTIVITY_ARN = /^arn:aws[a-z-]*:states:[^:]*:[^:]*:activity:.+$/;
const SUFFIXES: readonly (readonly [string, IntegrationPattern])[] = [
  [".sync:2", "sync"],
  [".sync", "sync"],
  [".waitForTaskToken", "callback"],
];

export function describeResource(resource: string): ResourceInfo {
  if (!URI.test(resource)) {
    return {
      kind: "invalid",
      problem:
        "is not a URI; use an ARN such as arn:aws:lambda:us-east-1:123456789012:function:name",
    };
  }
  if (ACTIVITY_ARN.test(resource)) return { kind: "activity" };
  const m = SERVICE_ARN.exec(resource);
  if (!m) return { kind: "uri" };
  let rest = m[1]!;
  let pattern: IntegrationPattern = "request-response";
  for (const [suffix, p] of SUFFIXES) {
    if (rest.endsWith(suffix)) {
      rest = rest.slice(0, -suffix.length);
      pattern = p;
      break;
    }
  }
  const parts = rest.split(":");
  if (parts[0] === "aws-sdk") {
    const [, service, action] = parts;
    if (parts.length !== 3 || !service || !action) {
      return {
        kind: "invalid",
        problem: "is not an AWS SDK integration; write arn:aws:states:::aws-sdk:<service>:<action>",
      };
    }
    return { kind: "integration", service: `aws-sdk:${service}`, action, pattern, known: true };
  }
  const [service, action] = parts;
  if (parts.length !== 2 || !service || !action) {
    return {
      kind: "invalid",
      problem: "is not a service integration; write arn:aws:states:::<service>:<action>",
    };
  }
  const actions = OPTIMIZED[service];
  if (actions === undefined) return { kind: "integration", service, action, pattern, known: false };
  if (!actions.includes(action)) {
    return {
      kind: "invalid",
      problem: `is not recognized: ${service} has no optimized integration '${action}' (it has ${actions.join(", ")}); for other API actions use arn:aws:states:::aws-sdk:${service}:${action}`,
    };
  }
  return { kind: "integration", service, action, pattern, known: true };
}
