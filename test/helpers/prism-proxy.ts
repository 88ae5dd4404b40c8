import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { waitFor } from './wait-for.ts';

const PRISM = resolve('node_modules/@stoplight/prism-cli/dist/index.js');

const freePort = () =>
  new Promise<number>((done) => {
    const server = createNetServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });

export interface PrismProxy {
  /** Where to send requests: Prism, which forwards them to the server. */
  readonly base: string;
  /** Everything Prism printed (violations included). */
  log(): string;
  /** One call through Prism: it must answer `expected` with no violation of the document, either way. */
  call(
    method: string,
    path: string,
    expected: number,
    init?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<{ res: Response; text: string; json: unknown }>;
  /** Every call made, one line each (`GET /x → 200 …`), for a failure's message. */
  readonly calls: string[];
  close(): Promise<void>;
}

/**
 * Prism in proxy mode in front of a real server: it checks each request and each answer against the OpenAPI
 * document, and with --errors turns any violation into an error of its own (and an `sl-violations` header).
 */
export const startPrismProxy = async (
  document: unknown,
  target: string,
  work: string,
  defaults: Record<string, string> = {},
): Promise<PrismProxy> => {
  const documentPath = join(work, 'openapi.json');
  writeFileSync(documentPath, JSON.stringify(document));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const prism: ChildProcess = spawn(
    process.execPath,
    [PRISM, 'proxy', documentPath, target, '--errors', '--host', '127.0.0.1', '--port', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const collect = (chunk: Buffer) => {
    log += chunk.toString('utf8');
  };
  prism.stdout?.on('data', collect);
  prism.stderr?.on('data', collect);
  await waitFor(
    () => log.includes('Prism is listening'),
    () => `prism to listen; it printed: ${log}`,
  );
  const calls: string[] = [];
  return {
    base,
    log: () => log,
    calls,
    async call(method, path, expected, init = {}) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...defaults,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...init.headers,
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      const text = await res.text();
      const label = `${method} ${path} → ${res.status} ${text.slice(0, 400)}`;
      calls.push(label);
      expect(res.headers.get('sl-violations'), label).toBeNull();
      expect(text, label).not.toContain('stoplight.io/prism/errors');
      expect(res.status, label).toBe(expected);
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { res, text, json };
    },
    async close() {
      if (prism.exitCode !== null) return;
      const exited = new Promise((done) => prism.once('exit', done));
      prism.kill('SIGTERM');
      await exited;
    },
  };
};
