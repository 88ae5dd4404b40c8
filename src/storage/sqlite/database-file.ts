import { type Stats, statSync } from 'node:fs';
import { StoreError } from '../store.ts';

const LOST = 'the database file was deleted or replaced while the service ran';

/**
 * The file a store opened, and whether its path still names it. Deleted or replaced under a running process,
 * SQLite goes on writing to the file it holds open, which nobody will find again: every write would succeed and
 * vanish at the next start. One stat(2) after each commit tells (one system call per group-commit batch, however
 * many writes it holds); once lost, the file stays lost until the process restarts (the store refuses every call),
 * since what was written after the loss is not in the file now at the path.
 */
export class DatabaseFile {
  readonly #path: string | undefined;
  readonly #identity: Pick<Stats, 'dev' | 'ino'> | undefined;
  #lost = false;

  /** `path` as given to SQLite; an in-memory database (':memory:', '') has no file to lose. */
  constructor(path: string) {
    const onDisk = path !== '' && path !== ':memory:' && !path.startsWith('file:');
    this.#path = onDisk ? path : undefined;
    this.#identity = onDisk ? statSync(path) : undefined;
  }

  get lost(): boolean {
    return this.#lost;
  }

  /** Throws StoreError 'unavailable' once the file is known lost (no I/O). */
  admit(): void {
    if (this.#lost) throw new StoreError('unavailable', LOST);
  }

  /** Looks at the path again; throws StoreError 'unavailable' when it no longer names the file opened. */
  verify(): void {
    this.admit();
    if (!this.#path || !this.#identity) return;
    const now = statSync(this.#path, { throwIfNoEntry: false });
    if (now && now.ino === this.#identity.ino && now.dev === this.#identity.dev) return;
    this.#lost = true;
    this.admit();
  }
}
