import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliServer, createKeyWithCli, startCliServer } from './helpers/cli-server.ts';
import { call } from './helpers/serve-spec.ts';
import { awaiting, waitFor } from './helpers/wait-for.ts';
import { outcome, settleDeliveries } from './helpers/webhook-api.ts';

// Issue 16: a shutdown finishes the webhook deliveries in flight and records them; when its grace runs out it cuts
// them, records the cut attempt, and releases its leases, so that the delivery is retried (same webhook-id).
const SPEC = `
ninefold: 1
service: { name: deliveries }
resources:
  Note: { fields: { title: { type: string, required: true } } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { admin: Everything. }
events:
  auto: true
  webhooks: { retry: [200ms, 200ms], allowPrivateTargets: true }
endpoints:
  Note: { operations: [create] }
`;

const dir = mkdtempSync(join(tmpdir(), 'ninefold-deliveries-'));
const spec = join(dir, 'service.yaml');
writeFileSync(spec, SPEC);
const servers: CliServer[] = [];
const closers: Array<() => void> = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  for (const close of closers) close();
  rmSync(dir, { recursive: true, force: true });
});

/** A receiver that holds each answer until the test lets it go (`answerHeld`), or answers at once once `open`. */
const holdingReceiver = async () => {
  const webhookIds: string[] = [];
  const held: ServerResponse[] = [];
  const state = { open: false };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      webhookIds.push(String(req.headers['webhook-id']));
      if (state.open) res.end('ok');
      else held.push(res);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    webhookIds,
    answerHeld: () => {
      for (const res of held.splice(0)) res.end('ok');
    },
    open: () => {
      state.open = true;
    },
  };
};

const exitOf = (server: CliServer) =>
  new Promise<number | null>((done) => {
    if (server.child.exitCode !== null) done(server.child.exitCode);
    else server.child.once('exit', (code) => done(code));
  });

/** Starts a server on `db` with an admin key, an endpoint to `url`, and one note written: its delivery is under way. */
const deliveringOne = async (db: string, url: string, args: string[] = []) => {
  const server = await startCliServer(spec, ['--db', db, ...args]);
  servers.push(server);
  const { key } = await createKeyWithCli(spec, db, 'admin');
  const headers = { 'x-api-key': key };
  const endpoint = await call(server.url, 'POST', '/webhook-endpoints', { json: { url }, headers });
  expect(endpoint.status).toBe(201);
  expect((await call(server.url, 'POST', '/notes', { json: { title: 'one' }, headers })).status).toBe(201);
  return { server, headers, endpointId: endpoint.body.id as string };
};

describe('webhook deliveries at shutdown', () => {
  it('a delivery in flight at the signal is finished and recorded before the process exits', async () => {
    const receiver = await holdingReceiver();
    const db = join(dir, 'finish.db');
    const { server, headers, endpointId } = await deliveringOne(db, receiver.url);
    await waitFor(() => receiver.webhookIds.length === 1, 'the delivery to reach the receiver');

    const exited = exitOf(server);
    server.child.kill('SIGTERM');
    // Readiness fails: it is shutting down, the delivery still in flight.
    await waitFor(
      () =>
        fetch(`${server.url}/readyz`).then(
          (r) => r.status === 503,
          () => true,
        ),
      'the shutdown to begin',
    );
    receiver.answerHeld();
    expect(await awaiting(exited, 'the process to exit')).toBe(0);

    receiver.open();
    const again = await startCliServer(spec, ['--db', db]);
    servers.push(again);
    const deliveries = await settleDeliveries(again.url, endpointId, headers, (ds) => ds.length === 1);
    expect(deliveries.map((d) => [d.state, d.log.map(outcome)])).toEqual([['delivered', [200]]]);
    expect(receiver.webhookIds).toHaveLength(1);
  });

  it('when the grace runs out, the delivery is cut, recorded, and retried by the next instance with the same webhook-id', async () => {
    const receiver = await holdingReceiver();
    const db = join(dir, 'cut.db');
    const { server, headers, endpointId } = await deliveringOne(db, receiver.url, ['--grace', '0.5']);
    await waitFor(() => receiver.webhookIds.length === 1, 'the delivery to reach the receiver');

    const exited = exitOf(server);
    server.child.kill('SIGTERM');
    expect(await awaiting(exited, 'the process to exit once its grace is over')).toBe(0);

    receiver.open();
    const again = await startCliServer(spec, ['--db', db]);
    servers.push(again);
    const deliveries = await settleDeliveries(
      again.url,
      endpointId,
      headers,
      (ds) => ds.length === 1 && ds[0]?.state === 'delivered',
    );
    expect(deliveries[0]?.log.map(outcome).at(-1)).toBe(200);
    expect(deliveries[0]?.log.length).toBe(2);
    expect(receiver.webhookIds).toHaveLength(2);
    expect(new Set(receiver.webhookIds).size).toBe(1);
  });
});
