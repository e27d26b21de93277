/**
 * The one place a model call leaves the process. Every request of the model runner
 * goes through `modelFetch`, so the egress policy (`STEPWISE_EGRESS_ALLOW`: loopback,
 * private, link-local and metadata addresses refused after DNS resolution and on
 * every redirect) applies by swapping this function for the egress-checked fetch.
 */
export type ModelFetch = (url: string, init: RequestInit) => Promise<Response>;

export const modelFetch: ModelFetch = (url, init) => fetch(url, init);
