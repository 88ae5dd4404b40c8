import type { FastifyBaseLogger } from 'fastify';

type Bindings = Record<string, unknown>;
type LogFn = (...args: unknown[]) => void;

/**
 * A request's logger, made on first use. Fastify makes a child logger for every request (pino copies its bindings
 * and levels into a new object: some 5-10 µs and the garbage), and with request logging off most requests never
 * log. The child is the same one, with the same request id, when one does.
 */
class RequestLogger {
  #made: FastifyBaseLogger | undefined;
  constructor(
    readonly parent: FastifyBaseLogger,
    readonly bindings: Bindings,
    readonly options: object,
  ) {}
  get #real(): FastifyBaseLogger {
    this.#made ??= this.parent.child(this.bindings, this.options);
    return this.#made;
  }
  get level(): string {
    return this.#made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.#real.level = level;
  }
  fatal(...args: unknown[]) {
    (this.#real.fatal as LogFn)(...args);
  }
  error(...args: unknown[]) {
    (this.#real.error as LogFn)(...args);
  }
  warn(...args: unknown[]) {
    (this.#real.warn as LogFn)(...args);
  }
  info(...args: unknown[]) {
    (this.#real.info as LogFn)(...args);
  }
  debug(...args: unknown[]) {
    (this.#real.debug as LogFn)(...args);
  }
  trace(...args: unknown[]) {
    (this.#real.trace as LogFn)(...args);
  }
  silent(...args: unknown[]) {
    (this.#real.silent as LogFn)(...args);
  }
  child(bindings: Bindings, options?: object): FastifyBaseLogger {
    return this.#real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the request's logger, made when it first logs. */
export const requestLogger = (parent: FastifyBaseLogger, bindings: Bindings, options: object): FastifyBaseLogger =>
  new RequestLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
