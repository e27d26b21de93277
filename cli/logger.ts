import { pino, type Logger } from "pino";

/**
 * The JSON log lines of `stepwise worker`, shaped as the API's (fastify logs through
 * pino too), so one collector reads both.
 */
export function createLogger(level: string): Logger {
  return pino({ level });
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
