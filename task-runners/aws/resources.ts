import { bareResource } from "../resources.js";
import { INTEGRATIONS } from "./optimized.js";

/**
 * The Task resources the AWS runner serves, as AWS writes them:
 *  - optimized integrations, `arn:aws:states:::lambda:invoke`, `…:::sqs:sendMessage`,
 *    `…:::sns:publish`, `…:::dynamodb:getItem|putItem|updateItem|deleteItem`,
 *    `…:::events:putEvents`;
 *  - AWS SDK integrations, `arn:aws:states:::aws-sdk:<service>:<action>`;
 * each also with `.waitForTaskToken` (the runner sends, the execution then waits for
 * the token's answer: task-runners/resources.ts). `.sync` is not served: these
 * services offer none, and a job-run pattern would need polling this runner does not do.
 *
 * A region in the ARN (`arn:aws:states:eu-west-1::…`) is the resource's own: the call
 * goes there.
 */
export interface AwsResource {
  kind: "optimized" | "sdk";
  /** `lambda`, `dynamodb`, `events`… (optimized) or the SDK service id (`s3`, `secretsmanager`). */
  service: string;
  /** `invoke`, `putItem`, `getObject`. */
  action: string;
  region: string | undefined;
}

const ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]*):[0-9]*:(.+)$/;
const SDK = /^aws-sdk:([a-z0-9]+):([a-z][A-Za-z0-9]*)$/;

export function parseAwsResource(resource: string): AwsResource | undefined {
  if (/\.sync(:2)?$/.test(resource)) return undefined;
  const m = ARN.exec(bareResource(resource));
  if (!m) return undefined;
  const region = m[1] === "" ? undefined : m[1];
  const rest = m[2]!;
  const sdk = SDK.exec(rest);
  if (sdk) return { kind: "sdk", service: sdk[1]!, action: sdk[2]!, region };
  const [service, action, ...more] = rest.split(":");
  if (more.length > 0 || service === undefined || action === undefined) return undefined;
  const actions = Object.hasOwn(INTEGRATIONS, service) ? INTEGRATIONS[service] : undefined;
  if (actions === undefined || !Object.hasOwn(actions, action)) return undefined;
  return { kind: "optimized", service, action, region };
}
