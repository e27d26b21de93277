import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../config/index.js";
import { runnerOptions, workerOptions } from "../../../config/service.js";

/**
 * The AWS runner's settings come from config/: STEPWISE_AWS_REGION when set and one
 * STEPWISE_AWS_ENDPOINT_<SERVICE> per service, each an http(s) URL; a bad one stops
 * the process with a ConfigError naming the variable (the CLI prints it as one line).
 */
describe("the AWS runner's configuration", () => {
  it("reads the endpoint overrides by service key and the region only when set", () => {
    const config = loadConfig({
      STEPWISE_AWS_ENDPOINT_DYNAMODB: "http://127.0.0.1:8000",
      STEPWISE_AWS_ENDPOINT_S3: "https://minio.internal:9000",
      STEPWISE_AWS_ENDPOINT_SECRETSMANAGER: "http://10.0.0.5:4566",
      STEPWISE_AWS_ENDPOINT_SQS: "",
    });
    expect(config.tasks.aws).toEqual({
      endpoints: {
        DYNAMODB: "http://127.0.0.1:8000",
        S3: "https://minio.internal:9000",
        SECRETSMANAGER: "http://10.0.0.5:4566",
      },
    });
    expect(workerOptions(config).aws).toBe(config.tasks.aws);
    expect(runnerOptions(config).aws).toBe(config.tasks.aws);
    expect(loadConfig({ STEPWISE_AWS_REGION: "eu-west-1" }).tasks.aws).toEqual({
      region: "eu-west-1",
      endpoints: {},
    });
  });

  it.each([
    ["STEPWISE_AWS_ENDPOINT_S3", "localhost:9000", "expected an http(s) URL"],
    ["STEPWISE_AWS_ENDPOINT_LAMBDA", "ftp://10.0.0.1/", "expected an http(s) URL"],
    ["STEPWISE_AWS_ENDPOINT_dynamodb", "http://127.0.0.1:8000", "in capitals"],
  ])("%s='%s' is refused, naming the variable", (name, value, expected) => {
    let thrown: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).setting).toBe(name);
    expect((thrown as ConfigError).message).toContain(name);
    expect((thrown as ConfigError).message).toContain(expected);
  });
});
