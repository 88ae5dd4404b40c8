import type { StoreChannel, StoreSignals } from './store.ts';

/**
 * Signals within one process: a store's writes tell its own listeners, on the next turn of the event loop (after a
 * group commit has had its turn to commit). Other processes on the same database are not told; they poll.
 */
export const createLocalSignals = (): StoreSignals & { notify(channel: StoreChannel): void } => {
  const listeners = new Map<StoreChannel, Set<() => void>>();
  const pending = new Set<StoreChannel>();
  const deliver = () => {
    const channels = [...pending];
    pending.clear();
    for (const channel of channels) for (const listener of listeners.get(channel) ?? []) listener();
  };
  return {
    subscribe(channel, listener) {
      const set = listeners.get(channel) ?? new Set();
      set.add(listener);
      listeners.set(channel, set);
      return () => set.delete(listener);
    },
    notify(channel) {
      if (!listeners.get(channel)?.size) return;
      if (pending.size === 0) setImmediate(deliver);
      pending.add(channel);
    },
  };
};

/** Makes the named methods of a part of the store notify `channel` when they are called (a write was made). */
export const notifying = <T extends object>(
  signals: { notify(channel: StoreChannel): void },
  channel: StoreChannel,
  part: T,
  methods: ReadonlyArray<keyof T & string>,
): T => {
  const target = part as Record<string, unknown>;
  for (const name of methods) {
    const method = target[name] as (...args: unknown[]) => unknown;
    target[name] = (...args: unknown[]) => {
      const result = method.apply(part, args);
      signals.notify(channel);
      return result;
    };
  }
  return part;
};
