import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
// @ts-expect-error s3rver ships no types
import S3rver from "s3rver";

/**
 * A real S3-protocol server for one test file: s3rver, file-backed in a fresh
 * temporary folder, on a free loopback port. Its one account is S3RVER/S3RVER.
 */
export interface S3Server {
  endpoint: string;
  client: S3Client;
  /** The variables the service needs to reach it. */
  env: Record<string, string>;
  put(bucket: string, key: string, body: string): Promise<void>;
  get(bucket: string, key: string): Promise<string>;
  keys(bucket: string, prefix?: string): Promise<string[]>;
  createBucket(bucket: string): Promise<void>;
  close(): Promise<void>;
}

export async function startS3Server(): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), "stepwise-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory });
  const address = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${address.port}`;
  const client = new S3Client({
    region: "us-east-1",
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return {
    endpoint,
    client,
    env: {
      STEPWISE_S3_ENDPOINT: endpoint,
      AWS_ACCESS_KEY_ID: "S3RVER",
      AWS_SECRET_ACCESS_KEY: "S3RVER",
      AWS_EC2_METADATA_DISABLED: "true",
    },
    async createBucket(bucket) {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    },
    async put(bucket, key, body) {
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from(body) }),
      );
    },
    async get(bucket, key) {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return got.Body!.transformToString();
    },
    async keys(bucket, prefix) {
      const listed = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, ...(prefix ? { Prefix: prefix } : {}) }),
      );
      return (listed.Contents ?? []).map((object) => object.Key!).sort();
    },
    async close() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
