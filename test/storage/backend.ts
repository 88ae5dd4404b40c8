import type { Store } from '../../src/storage/index.ts';

/** A backend under the contract: real databases it can create, open again (a restart), and take away. */
export interface Backend {
  /** Names a fresh, empty database. */
  create(): string;
  /** A store over a database `create` named; a second store over the same name sees the same data. */
  open(database: string): Store;
  /**
   * Takes the database away under an open store, as an operator or a fault would (SQLite: the file deleted;
   * PostgreSQL: the schema dropped).
   */
  lose(database: string): void | Promise<void>;
  /** Writers on two stores over one database run side by side (PostgreSQL), rather than one after the other. */
  readonly concurrentWriters?: boolean;
  /** A write through one store is told to the signal listeners of another store on the same database. */
  readonly sharedSignals?: boolean;
}
