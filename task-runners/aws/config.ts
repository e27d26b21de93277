/**
 * What config/ reads for the AWS runner. Endpoint overrides are one variable per
 * service, `STEPWISE_AWS_ENDPOINT_` + the service's key in upper case (`S3`,
 * `DYNAMODB`, `SQS`, `SNS`, `LAMBDA`, `EVENTBRIDGE`, or any SDK service id, such as
 * `SECRETSMANAGER`): each must be an absolute http(s) URL.
 */
export const AWS_ENDPOINT_PREFIX = "STEPWISE_AWS_ENDPOINT_";

/** A malformed override: which variable, and what is wrong with it. */
export class AwsEndpointError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = "AwsEndpointError";
  }
}

/** The overrides in an environment, by service key; throws AwsEndpointError on a bad one. */
export function parseAwsEndpoints(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const endpoints: Record<string, string> = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(AWS_ENDPOINT_PREFIX) || raw === undefined || raw === "") continue;
    const key = name.slice(AWS_ENDPOINT_PREFIX.length);
    if (!/^[A-Z0-9]+$/.test(key)) {
      throw new AwsEndpointError(
        name,
        `${name}: expected ${AWS_ENDPOINT_PREFIX}<SERVICE> with the service's id in capitals, like ${AWS_ENDPOINT_PREFIX}DYNAMODB`,
      );
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new AwsEndpointError(
        name,
        `${name}='${raw}': expected an http(s) URL such as http://127.0.0.1:8000`,
      );
    }
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
      throw new AwsEndpointError(
        name,
        `${name}='${raw}': expected an http(s) URL such as http://127.0.0.1:8000`,
      );
    }
    endpoints[key] = raw;
  }
  return endpoints;
}
