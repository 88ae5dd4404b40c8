import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { awaiting } from './wait-for.ts';

/** The machine's Redis, shared with others: tests use it only under a key prefix of their own. */
export const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';

const freePort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
};

/** A Redis of the test's own (never the machine's), to kill and start again; no persistence. */
export const startPrivateRedis = async () => {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = started;
    let output = '';
    await awaiting(
      new Promise<void>((ready, failed) => {
        started.stdout?.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('Ready to accept connections')) ready();
        });
        started.on('exit', () => failed(new Error(`redis-server exited: ${output}`)));
      }),
      `redis-server on port ${port} to be ready`,
    );
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    /** SIGKILL, and wait until it is gone. */
    async kill() {
      const running = child;
      if (!running || running.exitCode !== null) return;
      const exited = once(running, 'exit');
      running.kill('SIGKILL');
      await exited;
    },
    restart: start,
    stop() {
      return this.kill();
    },
  };
};
