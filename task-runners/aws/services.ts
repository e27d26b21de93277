/**
 * The AWS services a definition names, and what each is in the AWS SDK for
 * JavaScript v3: the npm package of its client, the key of its endpoint override
 * (`STEPWISE_AWS_ENDPOINT_<KEY>`) and the service name AWS puts before an error of
 * an `aws-sdk:` integration.
 *
 * Step Functions names a service in `arn:aws:states:::aws-sdk:<service>:<action>`
 * by its SDK service id in lower case without separators (`secretsmanager`,
 * `kinesisvideoarchivedmedia`); the JavaScript packages keep the words apart
 * (`@aws-sdk/client-secrets-manager`). Most ids are one word and map as they are;
 * the rest are in PACKAGE_WORDS. Error names are `<ServiceName>.<ErrorName>` with
 * both in PascalCase (AWS developer guide, "Learning to use AWS service SDK
 * integrations in Step Functions": `AcmPca.ResourceNotFoundException`,
 * `S3.BucketAlreadyExistsException`).
 */
export interface AwsService {
  /** The id as a definition names it: `s3`, `dynamodb`, `secretsmanager`. */
  id: string;
  /** `@aws-sdk/client-<words>`. */
  pkg: string;
  /** The suffix of its endpoint override variable: `S3`, `DYNAMODB`, `EVENTBRIDGE`. */
  envKey: string;
  /** The service in the error names of `aws-sdk:` integrations: `S3`, `DynamoDb`, `AcmPca`. */
  errorName: string;
}

/** Service ids of several words: the words of their package name. */
const PACKAGE_WORDS: Readonly<Record<string, string>> = {
  acmpca: "acm-pca",
  apigateway: "api-gateway",
  applicationautoscaling: "application-auto-scaling",
  bedrockagent: "bedrock-agent",
  bedrockagentruntime: "bedrock-agent-runtime",
  bedrockruntime: "bedrock-runtime",
  cloudwatchlogs: "cloudwatch-logs",
  cognitoidentityprovider: "cognito-identity-provider",
  costexplorer: "cost-explorer",
  dynamodbstreams: "dynamodb-streams",
  elasticloadbalancingv2: "elastic-load-balancing-v2",
  kinesisanalyticsv2: "kinesis-analytics-v2",
  kinesisvideo: "kinesis-video",
  kinesisvideoarchivedmedia: "kinesis-video-archived-media",
  kinesisvideomedia: "kinesis-video-media",
  sagemakerruntime: "sagemaker-runtime",
  secretsmanager: "secrets-manager",
  servicecatalog: "service-catalog",
  ssmincidents: "ssm-incidents",
  stepfunctions: "sfn",
};

/** Where AWS's PascalCase of a service differs from its package words in PascalCase. */
const ERROR_NAMES: Readonly<Record<string, string>> = {
  cloudwatch: "CloudWatch",
  cloudwatchlogs: "CloudWatchLogs",
  dynamodb: "DynamoDb",
  eventbridge: "EventBridge",
  sfn: "Sfn",
  stepfunctions: "Sfn",
};

/** The optimized integrations' service names that are not SDK service ids. */
const ALIASES: Readonly<Record<string, string>> = { events: "eventbridge" };

export function awsService(id: string): AwsService {
  const sdkId = ALIASES[id] ?? id;
  const words = PACKAGE_WORDS[sdkId] ?? sdkId;
  return {
    id,
    pkg: `@aws-sdk/client-${words}`,
    envKey: sdkId.toUpperCase(),
    errorName:
      ERROR_NAMES[sdkId] ??
      words
        .split("-")
        .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
        .join(""),
  };
}

/** `putObject` → `PutObjectCommand`, the SDK's class for the action. */
export function commandName(action: string): string {
  return `${action.charAt(0).toUpperCase()}${action.slice(1)}Command`;
}
