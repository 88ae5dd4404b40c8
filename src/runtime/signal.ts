/** A notification without data: something happened, whoever listens looks for themselves. */
export interface Signal {
  notify(): void;
  /** Calls `listener` on every notification; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}

export const createSignal = (): Signal => {
  const listeners = new Set<() => void>();
  return {
    notify() {
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
};
