// "Fast" in a test means little work, not little wall time: a loaded machine stretches wall time many times
// over, while the CPU time the work costs stays about the same. These measure the CPU time of this process (all
// its threads, so the in-process server and libuv's pool too) from a starting point.

/** CPU milliseconds this process spent since `start` (a `process.cpuUsage()`). */
export const cpuMsSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

/** Runs `work`; returns its result and the CPU milliseconds this process spent meanwhile. */
export const withCpuMs = async <T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> => {
  const start = process.cpuUsage();
  const result = await work();
  return { result, cpuMs: cpuMsSince(start) };
};
