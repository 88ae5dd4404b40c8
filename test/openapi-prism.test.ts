import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkFile } from '../src/spec/check.ts';
import { type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.ts';

/**
 * Prism in proxy mode between a client and the real order desk: it checks each request and each answer against
 * the OpenAPI document the server publishes, and with --errors turns any violation into an error of its own.
 * A scenario over the generated endpoints, the transitions and the built-in APIs must pass with none.
 */

const PRISM = resolve('node_modules/@stoplight/prism-cli/dist/index.js');

const freePort = () =>
  new Promise<number>((done) => {
    const server = createNetServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });

describe('prism proxy in front of the order desk', () => {
  const work = mkdtempSync(join(tmpdir(), 'ninefold-prism-'));
  let served: Served;
  let receiver: Receiver;
  let prism: ChildProcess;
  let prismLog = '';
  let base = '';
  let key = '';

  beforeAll(async () => {
    const { spec, dir } = await checkFile('examples/orders/service.yaml');
    if (!spec) throw new Error('the orders example does not pass its checks');
    // Webhooks go to a receiver on this machine's loopback, which the example rightly refuses.
    const webhooks = { ...spec.events?.webhooks, allowPrivateTargets: true };
    const plan = buildPlan({ ...spec, events: { ...spec.events, webhooks } }, dir);
    receiver = await startReceiver();
    served = await servePlan(plan, { dbPath: join(work, 'service.db') });
    key = (await issueApiKey(served.store, { subject: 'staff-1', roles: ['admin', 'support', 'billing'] })).key;
    const documentPath = join(work, 'openapi.json');
    writeFileSync(documentPath, JSON.stringify(buildOpenApi(plan)));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    prism = spawn(
      process.execPath,
      [PRISM, 'proxy', documentPath, served.url, '--errors', '--host', '127.0.0.1', '--port', String(port)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const collect = (chunk: Buffer) => {
      prismLog += chunk.toString('utf8');
    };
    prism.stdout?.on('data', collect);
    prism.stderr?.on('data', collect);
    await waitFor(
      () => prismLog.includes('Prism is listening'),
      () => `prism to listen; it printed: ${prismLog}`,
    );
  });

  afterAll(async () => {
    if (prism && prism.exitCode === null) {
      const exited = new Promise((done) => prism.once('exit', done));
      prism.kill('SIGTERM');
      await exited;
    }
    await served?.close();
    await receiver?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const answers: string[] = [];
  /** One call through Prism: the answer must be the server's own, with no violation reported. */
  const call = async (method: string, path: string, expected: number, body?: unknown, headers = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        'x-api-key': key,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const label = `${method} ${path} → ${res.status} ${text.slice(0, 400)}`;
    answers.push(label);
    expect(res.headers.get('sl-violations'), label).toBeNull();
    expect(text, label).not.toContain('stoplight.io/prism/errors');
    expect(res.status, label).toBe(expected);
    return { res, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  };

  it('passes a full scenario with no violation', async () => {
    await call('GET', '/healthz', 200);
    await call('GET', '/readyz', 200);
    const hook = await call('POST', '/webhook-endpoints', 201, {
      url: receiver.url,
      events: ['Order.created', 'Order.placed'],
    });
    const hookId = String(hook.json?.id);
    await call('GET', '/webhook-endpoints', 200);
    await call('GET', `/webhook-endpoints/${hookId}`, 200);
    await call('PATCH', `/webhook-endpoints/${hookId}`, 200, { description: 'Fulfilment' });

    const made = await call('POST', '/_ninefold/keys', 201, { roles: ['customer'], subject: 'ignored' });
    await call('GET', '/_ninefold/keys', 200);

    const customer = await call('POST', '/customers', 201, { email: 'jane@example.com', fullName: 'Jane Doe' });
    const customerId = String(customer.json?.id);
    await call('POST', '/customers', 409, { email: 'jane@example.com', fullName: 'Jane Again' });
    const product = await call('POST', '/products', 201, { sku: 'MUG-01', name: 'Mug', price: '12.50', stock: 5 });
    const productId = String(product.json?.id);
    const order = await call('POST', '/orders', 201, {
      customer: customerId,
      lines: [{ product: productId, qty: 2 }],
    });
    const orderId = String(order.json?.id);
    await call('GET', `/orders?customer=${customerId}&status[in]=cart,placed&sort=-createdAt&count=true`, 200);
    await call('GET', '/customers?email[icontains]=JANE&tier=free', 200);
    await call('GET', '/products?tags[contains]=kitchen&price[gte]=1.00', 200);
    await call('GET', `/orders/${orderId}`, 200);
    const placed = await call('POST', `/orders/${orderId}/place`, 200, {});
    const etag = placed.res.headers.get('etag') ?? '';
    await call('POST', `/orders/${orderId}/place`, 409, {});
    await call(
      'POST',
      `/orders/${orderId}/ship`,
      409,
      { carrier: 'DHL', trackingNumber: 'JD014600003SE' },
      { 'if-match': etag },
    );
    await call('GET', `/orders/${orderId}/history`, 200);
    await call('GET', `/customers/${customerId}/summary`, 200);

    const events = await call('GET', '/events?type=Order.created,Order.placed&limit=10', 200);
    const [first] = (events.json?.data ?? []) as Array<{ id: string }>;
    await call('GET', `/events/${first?.id}`, 200);
    await call('GET', '/events/evt_01JD7X3K9Q2M4N6P8R0S2T4V6W', 404);
    await waitFor(() => receiver.hits.length >= 2, 'the two deliveries of Order.created and Order.placed');
    await call('GET', `/webhook-endpoints/${hookId}/deliveries`, 200);
    await call('POST', `/webhook-endpoints/${hookId}/rotate-secret`, 200);
    await call('GET', '/_ninefold/callbacks', 200);

    await call('DELETE', `/_ninefold/keys/${String(made.json?.id)}`, 204);
    await call('DELETE', `/webhook-endpoints/${hookId}`, 204);
    await call('GET', `/webhook-endpoints/${hookId}`, 404);

    expect(answers.length).toBeGreaterThanOrEqual(30);
    expect(prismLog).not.toMatch(/✖|violation/i);
  });
});
