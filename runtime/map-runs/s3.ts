import type { S3Client } from "@aws-sdk/client-s3";
import { quietNodeVersionWarning } from "../../task-runners/aws/index.js";

/**
 * Where a Distributed Map reads its items and writes its results: any
 * S3-compatible store (config/: `STEPWISE_S3_ENDPOINT`, empty for AWS's own;
 * path-style when an endpoint is given). Credentials come from the standard AWS
 * chain (`AWS_ACCESS_KEY_ID`, profiles, roles). The endpoint is the operator's,
 * like Redis's: it is not subject to the task runners' egress policy, and
 * nothing in a definition can change the host a request goes to.
 */
export interface ItemStoreSettings {
  /** Empty or absent: AWS S3 itself. */
  endpoint?: string;
  region: string;
}

/** The S3 client package: its commands are constructed from it. */
export type S3Module = typeof import("@aws-sdk/client-s3");

/** A client of the item store and the package it came from. */
export interface ItemStore {
  client: S3Client;
  s3: S3Module;
}

let s3Module: Promise<S3Module> | undefined;

/**
 * The client, made on a Distributed Map's first read or write: the SDK is loaded
 * then, not when a worker starts (a service that runs no Distributed Map never
 * loads it; start-up cost, bench/start-cost.ts).
 */
export async function itemStoreClient(settings: ItemStoreSettings): Promise<ItemStore> {
  s3Module ??= quietNodeVersionWarning()
    .then(() => import("@aws-sdk/client-s3"))
    // A CommonJS package: Node gives its exports by name, the bundle (scripts/build.ts)
    // only as `default`.
    .then((mod) => ("S3Client" in mod ? mod : (mod as { default: S3Module }).default));
  const s3 = await s3Module;
  const client = new s3.S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
    // Some S3-compatible stores keep aws-chunked framing in the object when a
    // streamed body carries the SDK's default checksums: send them only when required.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return { client, s3 };
}

/** `s3://bucket/key`, as causes name an object. */
export function s3Url(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/** A short description of an S3 SDK error: its name and message. */
export function s3ErrorText(err: unknown): string {
  if (err instanceof Error) {
    const name = err.name && err.name !== "Error" ? `${err.name}: ` : "";
    return `${name}${err.message}`;
  }
  return String(err);
}
