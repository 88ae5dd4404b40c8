import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkFile } from '../src/spec/check.ts';
import { type PrismProxy, startPrismProxy } from './helpers/prism-proxy.ts';
import { type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.ts';

/**
 * Prism in proxy mode between a client and the real order desk: it checks each request and each answer against
 * the OpenAPI document the server publishes, and with --errors turns any violation into an error of its own.
 * A scenario over the generated endpoints, the transitions and the built-in APIs must pass with none.
 */

describe('prism proxy in front of the order desk', () => {
  const work = mkdtempSync(join(tmpdir(), 'ninefold-prism-'));
  let served: Served;
  let receiver: Receiver;
  let prism: PrismProxy;

  beforeAll(async () => {
    const { spec, dir } = await checkFile('examples/orders/service.yaml');
    if (!spec) throw new Error('the orders example does not pass its checks');
    // Webhooks go to a receiver on this machine's loopback, which the example rightly refuses.
    const webhooks = { ...spec.events?.webhooks, allowPrivateTargets: true };
    const plan = buildPlan({ ...spec, events: { ...spec.events, webhooks } }, dir);
    receiver = await startReceiver();
    served = await servePlan(plan, { dbPath: join(work, 'service.db') });
    const key = (await issueApiKey(served.store, { subject: 'staff-1', roles: ['admin', 'support', 'billing'] })).key;
    prism = await startPrismProxy(buildOpenApi(plan), served.url, work, { 'x-api-key': key });
  });

  afterAll(async () => {
    await prism?.close();
    await served?.close();
    await receiver?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const call = (method: string, path: string, expected: number, body?: unknown, headers = {}) =>
    prism.call(method, path, expected, { body, headers }).then(({ res, json }) => ({
      res,
      json: json as Record<string, unknown> | undefined,
    }));

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

    expect(prism.calls.length).toBeGreaterThanOrEqual(30);
    expect(prism.log()).not.toMatch(/✖|violation/i);
  });
});
