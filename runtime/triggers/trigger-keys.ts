/**
 * The Redis keys of schedules, rules and the event bus. All live in the control
 * hash tag (`{sw}`, as state machines do: store/keys.ts), so every script over
 * them stays in one Redis Cluster slot.
 */
export interface TriggerKeys {
  /** Hash of a schedule: `def` (JSON), `rev` (bumped by every update), `st` (JSON, what the ticks did). */
  schedule(name: string): string;
  /** Sorted set of schedule names (score 0: listed by name). */
  schedules: string;
  /** Sorted set: schedule name → when it must next be looked at (ms). The durable timer of ticks. */
  due: string;
  /** String: which worker is firing a schedule now (a short lease). */
  claim(name: string): string;
  /** Hash of a rule: `def` (JSON). */
  rule(name: string): string;
  /** Sorted set of rule names. */
  rules: string;
  /** String: an accepted event (JSON), kept for the retention window. */
  event(eventId: string): string;
  /** Sorted set: event id → accepted at (ms); the listing, pruned past retention. */
  events: string;
  /** String: a sender's entry `Id` → the EventId it was answered with (idempotent retries). */
  entryId(id: string): string;
  /** Sorted set: event id → when to deliver it (again): the outbox of events not yet fully delivered. */
  outbox: string;
  /** String: a parked waitForEvent task (JSON), by its task token. */
  waiter(token: string): string;
  /** Set of waiter tokens by `<source>|<detail-type>` (`*` where the pattern names no exact value). */
  waiterIndex(source: string, detailType: string): string;
  /** Sorted set: waiter token → its TimeoutSeconds deadline (ms). */
  waitDeadlines: string;
  /** Sorted set: waiter token → when to look again whether its execution still runs (ms). */
  waitChecks: string;
  /** Sorted set: waiter token → when to answer its task (again): the outbox of decided waits. */
  waitAnswers: string;
  /** Hash: waiter token → how its wait ended (JSON: the event, or a timeout). */
  waitResults: string;
}

export function triggerKeys(prefix: string): TriggerKeys {
  const base = `${prefix}:{sw}:trg:`;
  return {
    schedule: (name) => `${base}sch:${name}`,
    schedules: `${base}schs`,
    due: `${base}due`,
    claim: (name) => `${base}claim:${name}`,
    rule: (name) => `${base}rule:${name}`,
    rules: `${base}rules`,
    event: (eventId) => `${base}ev:${eventId}`,
    events: `${base}evs`,
    entryId: (id) => `${base}evid:${id}`,
    outbox: `${base}outbox`,
    waiter: (token) => `${base}wt:${token}`,
    waiterIndex: (source, detailType) => `${base}wx:${source}|${detailType}`,
    waitDeadlines: `${base}wdl`,
    waitChecks: `${base}wchk`,
    waitAnswers: `${base}wans`,
    waitResults: `${base}wres`,
  };
}
