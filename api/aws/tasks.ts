import type { Json } from "../../engine/core/json.js";
import { RuntimeError, type TaggedResource } from "../../runtime/contract/index.js";
import { activityArn, isValidName } from "../../runtime/store/ids.js";
import { parseActivityArn, parseTaggableArn } from "./arns.js";
import { awsError, invalidField } from "./errors.js";
import {
  epochSeconds,
  jsonString,
  nextToken,
  optionalString,
  pageSize,
  requiredString,
  tagList,
  tagObjects,
  type Body,
} from "./fields.js";
import type { ActionTable, AwsContext } from "./protocol.js";

/**
 * Task tokens (SendTaskSuccess/Failure/Heartbeat), activities (Create, Describe,
 * List, Delete, GetActivityTask) and tags (TagResource, UntagResource,
 * ListTagsForResource).
 */

/** AWS holds GetActivityTask for up to 60 seconds. */
const POLL_SECONDS = 60;

function token(body: Body): string {
  return requiredString(body, "taskToken", { max: 2048 });
}

async function success(body: Body, ctx: AwsContext): Promise<unknown> {
  const taskToken = token(body);
  const output = jsonString(body, "output", "InvalidOutput", undefined);
  if (output === undefined) throw invalidField("output", "Member must not be null");
  await ctx.runtime.sendTaskSuccess(taskToken, output as Json, ctx.caller);
  return {};
}

async function failure(body: Body, ctx: AwsContext): Promise<unknown> {
  const taskToken = token(body);
  const error = optionalString(body, "error", { max: 256 });
  const cause = optionalString(body, "cause", { max: 32768 });
  await ctx.runtime.sendTaskFailure(taskToken, error, cause, ctx.caller);
  return {};
}

async function heartbeat(body: Body, ctx: AwsContext): Promise<unknown> {
  await ctx.runtime.sendTaskHeartbeat(token(body), ctx.caller);
  return {};
}

function activityName(body: Body): string {
  const name = requiredString(body, "name", { max: 80 });
  if (!isValidName(name)) {
    throw awsError("InvalidName", `Invalid Name: '${name}' (letters, digits, '_', '.', '-')`);
  }
  return name;
}

/** The activity an ARN names here (ActivityDoesNotExist for other accounts' and unknown ones). */
async function knownActivity(body: Body, ctx: AwsContext): Promise<string> {
  const ref = parseActivityArn(requiredString(body, "activityArn", { max: 256 }));
  if (!ref.ours) throw awsError("ActivityDoesNotExist", `Activity Does Not Exist: '${ref.name}'`);
  await ctx.runtime.describeActivity(ref.name);
  return ref.name;
}

async function createActivity(body: Body, ctx: AwsContext): Promise<unknown> {
  const name = activityName(body);
  const tags = tagList(body);
  const created = await ctx.runtime.createActivity(name);
  await ctx.runtime.tagResource({ kind: "activity", name }, tags);
  return { activityArn: activityArn(name), creationDate: epochSeconds(created.createdAt) };
}

async function describeActivity(body: Body, ctx: AwsContext): Promise<unknown> {
  const name = await knownActivity(body, ctx);
  const activity = await ctx.runtime.describeActivity(name);
  return { activityArn: activityArn(name), name, creationDate: epochSeconds(activity.createdAt) };
}

async function listActivities(body: Body, ctx: AwsContext): Promise<unknown> {
  const limit = pageSize(body);
  const cursor = nextToken(body);
  const page = await ctx.runtime.listActivities({
    ...(limit !== undefined ? { limit } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const activities = page.items.map((a) => ({
    activityArn: activityArn(a.name),
    name: a.name,
    creationDate: epochSeconds(a.createdAt),
  }));
  return page.nextCursor !== undefined
    ? { activities, nextToken: page.nextCursor }
    : { activities };
}

async function deleteActivity(body: Body, ctx: AwsContext): Promise<unknown> {
  const ref = parseActivityArn(requiredString(body, "activityArn", { max: 256 }));
  if (ref.ours) await ctx.runtime.deleteActivity(ref.name);
  return {};
}

async function getActivityTask(body: Body, ctx: AwsContext): Promise<unknown> {
  const name = await knownActivity(body, ctx);
  const workerName = optionalString(body, "workerName", { min: 1, max: 80 });
  const task = await ctx.runtime.getActivityTask(
    name,
    POLL_SECONDS,
    workerName ?? ctx.caller?.name,
  );
  // AWS answers an empty poll with no token (the SDK sees taskToken undefined).
  if (!task) return {};
  return { taskToken: task.taskToken, input: JSON.stringify(task.input) };
}

/** The resource an ARN names; ResourceNotFound for what does not exist (AWS's word here). */
async function tagged(body: Body, ctx: AwsContext, run: (r: TaggedResource) => Promise<unknown>) {
  const ref = parseTaggableArn(requiredString(body, "resourceArn", { max: 256 }));
  if (!ref.ours) throw awsError("ResourceNotFound", `Resource not found: '${ref.name}'`);
  try {
    return await run({ kind: ref.kind, name: ref.name });
  } catch (err) {
    if (
      err instanceof RuntimeError &&
      (err.code === "StateMachineDoesNotExist" || err.code === "ActivityDoesNotExist")
    ) {
      throw awsError("ResourceNotFound", `Resource not found: '${String(body.resourceArn)}'`);
    }
    throw err;
  }
}

async function tagResource(body: Body, ctx: AwsContext): Promise<unknown> {
  if (!Array.isArray(body.tags)) throw invalidField("tags", "Member must not be null");
  const tags = tagList(body);
  await tagged(body, ctx, (r) => ctx.runtime.tagResource(r, tags));
  return {};
}

async function untagResource(body: Body, ctx: AwsContext): Promise<unknown> {
  const keys = body.tagKeys;
  if (!Array.isArray(keys) || keys.some((k) => typeof k !== "string" || k.length > 128)) {
    throw invalidField("tagKeys", "Member must be a list of strings of at most 128 characters");
  }
  await tagged(body, ctx, (r) => ctx.runtime.untagResource(r, keys as string[]));
  return {};
}

async function listTags(body: Body, ctx: AwsContext): Promise<unknown> {
  const tags = (await tagged(body, ctx, (r) => ctx.runtime.listTags(r))) as Record<string, string>;
  return { tags: tagObjects(tags) };
}

export const taskActions: ActionTable = {
  SendTaskSuccess: { permission: "callback", run: success },
  SendTaskFailure: { permission: "callback", run: failure },
  SendTaskHeartbeat: { permission: "callback", run: heartbeat },
  CreateActivity: { permission: "definitions:write", run: createActivity },
  DescribeActivity: { permission: "definitions:read", run: describeActivity },
  ListActivities: { permission: "definitions:read", run: listActivities },
  DeleteActivity: { permission: "definitions:write", run: deleteActivity },
  GetActivityTask: { permission: "callback", run: getActivityTask },
  TagResource: { permission: "definitions:write", run: tagResource },
  UntagResource: { permission: "definitions:write", run: untagResource },
  ListTagsForResource: { permission: "definitions:read", run: listTags },
};
