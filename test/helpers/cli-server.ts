import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '../..');

export interface CliServer {
  readonly url: string;
  readonly child: ChildProcess;
  /** Stops the process (SIGTERM) and waits for it to exit; its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs the real `ninefold serve` (dist must be built: test/global-setup.ts does it) on a port the system picks,
 * and resolves once it prints where it serves. No deadline of its own: a server that never starts fails the
 * test at the test's time-out, with what it printed.
 */
export const startCliServer = (
  spec: string,
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<CliServer> =>
  new Promise((done, fail) => {
    const child = spawn(
      process.execPath,
      [resolve(ROOT, 'bin/ninefold.js'), 'serve', spec, '--port', '0', '--log-level', 'error', ...args],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
    );
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const url = /serving at (http:\/\/[^\s]+)/.exec(out)?.[1];
      if (!url) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      done({
        url,
        child,
        stop: () =>
          new Promise((exited) => {
            if (child.exitCode !== null) return exited(child.exitCode);
            child.once('exit', (code) => exited(code));
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    child.once('exit', (code) => fail(new Error(`ninefold serve exited (${code}) before serving:\n${out}`)));
  });

/** Makes an API key with `ninefold keys create` on the database `db`: the key and its id. */
export const createKeyWithCli = async (spec: string, db: string, role: string) => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    resolve(ROOT, 'bin/ninefold.js'),
    'keys',
    'create',
    spec,
    '--role',
    role,
    '--db',
    db,
  ]);
  return { key: stdout.trim().split('\n').at(-1) as string, id: /key_[0-9a-f]+/.exec(stdout)?.[0] as string };
};
