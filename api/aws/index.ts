import type { Admission } from "../admission.js";
import type { FastifyPluginAsync } from "fastify";
import type { Runtime } from "../../runtime/contract/index.js";
import type { TaskRunner } from "../../task-runners/index.js";
import type { ApiKey } from "../auth.js";
import { awsPlugin, type ActionTable } from "./protocol.js";
import { executionActions } from "./executions.js";
import { expressActions } from "./express.js";
import { mapRunActions } from "./map-runs.js";
import { stateMachineActions } from "./state-machines.js";
import { taskActions } from "./tasks.js";
import { testStateActions } from "./test-state.js";
import { versionActions } from "./versions.js";

/** Every action of the AWS endpoint, by its X-Amz-Target name. */
export const AWS_ACTIONS: ActionTable = {
  ...stateMachineActions,
  ...executionActions,
  ...taskActions,
  ...versionActions,
  ...expressActions,
  ...testStateActions,
  ...mapRunActions,
};

export interface AwsApiOptions {
  runtime: Runtime;
  apiKeys: readonly ApiKey[];
  serves: (resource: string) => boolean;
  /** What TestState calls for a Task without a mock. */
  runners?: readonly TaskRunner[];
  admission?: Admission;
}

/** The AWS Step Functions endpoint (`POST /`), registered by api/server.ts. */
export const awsApiPlugin: FastifyPluginAsync<AwsApiOptions> = async (app, options) => {
  await app.register(awsPlugin, { ...options, actions: AWS_ACTIONS });
};
