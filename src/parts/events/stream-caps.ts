import { ApiError } from '../errors/api-error.ts';

/** Seconds a refused caller is told to wait: streams end often enough that a place is soon free. */
const RETRY_AFTER_SEC = 5;

/** Open streams per caller and in all, within the spec's caps (`maxPerCaller`, `maxOpen`). */
export const createStreamCaps = (maxPerCaller: number, maxOpen: number) => {
  const perCaller = new Map<string, number>();
  let open = 0;
  return {
    /** Counts a new stream of `caller` in, or throws 429 too_many_streams; call what it returns when it ends. */
    take(caller: string): () => void {
      const mine = perCaller.get(caller) ?? 0;
      if (mine >= maxPerCaller || open >= maxOpen) {
        throw new ApiError(
          'too_many_streams',
          mine >= maxPerCaller
            ? `At most ${maxPerCaller} event streams may be open at once per caller.`
            : 'The service has as many event streams open as it serves.',
          undefined,
          undefined,
          { 'retry-after': String(RETRY_AFTER_SEC) },
        );
      }
      perCaller.set(caller, mine + 1);
      open++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
        const left = (perCaller.get(caller) ?? 1) - 1;
        if (left > 0) perCaller.set(caller, left);
        else perCaller.delete(caller);
      };
    },
  };
};
