import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkFile } from '../src/spec/check.ts';
import { type PrismProxy, startPrismProxy } from './helpers/prism-proxy.ts';
import { freshDatabase, type Served, servePlan } from './helpers/serve-spec.ts';

// examples/billing, Stripe's conventions from the spec alone, walked over HTTP through Prism in proxy mode: every
// request and answer is checked against the OpenAPI document the server publishes, and must show no violation.
describe('examples/billing in Stripe’s conventions', () => {
  const work = mkdtempSync(join(tmpdir(), 'ninefold-billing-'));
  let served: Served;
  let prism: PrismProxy;
  let key = '';
  const basic = () => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

  beforeAll(async () => {
    const { spec, dir } = await checkFile('examples/billing/service.yaml');
    if (!spec) throw new Error('examples/billing does not pass its checks');
    const plan = buildPlan(spec, dir);
    served = await servePlan(plan, { dbPath: freshDatabase() });
    key = (await issueApiKey(served.store, { subject: 'acct_1', roles: ['admin'], prefix: 'sk_test_' })).key;
    prism = await startPrismProxy(buildOpenApi(plan), served.url, work, { authorization: `Bearer ${key}` });
  });
  afterAll(async () => {
    await prism?.close();
    await served?.close({ remove: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('walks customers and an invoice from draft to paid, with no violation of its document', async () => {
    const call = prism.call;
    const created = await call('POST', '/v1/customers', 201, {
      body: { email: 'Jenny.Rosen@Example.com', name: 'Jenny Rosen' },
      headers: { 'idempotency-key': 'cus-1' },
    });
    const customer = created.json as Record<string, unknown>;
    expect(customer).toMatchObject({ object: 'customer', email: 'jenny.rosen@example.com', invoice_count: 0 });
    expect(String(customer.id)).toMatch(/^cus_/);
    // The same Idempotency-Key answers the first answer again, and creates nothing.
    const replay = await call('POST', '/v1/customers', 201, {
      body: { email: 'Jenny.Rosen@Example.com', name: 'Jenny Rosen' },
      headers: { 'idempotency-key': 'cus-1' },
    });
    expect(replay.res.headers.get('idempotent-replayed')).toBe('true');
    expect((replay.json as { id: string }).id).toBe(customer.id);
    const taken = await call('POST', '/v1/customers', 400, { body: { email: 'jenny.rosen@example.com' } });
    expect(taken.json).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 'unique_violation',
        message: 'A customer with this email already exists.',
        param: 'email',
      },
    });
    await call('POST', '/v1/customers', 201, { body: { email: 'ann@example.com' } });

    // Lists: {"object": "list", "data", "has_more", "url"}, paged with starting_after; the key as the Basic user.
    const first = await call('GET', '/v1/customers?limit=1', 200, { headers: { authorization: basic() } });
    expect(first.json).toMatchObject({ object: 'list', has_more: true, url: '/v1/customers' });
    const firstId = (first.json as { data: Array<{ id: string }> }).data[0]?.id;
    const next = await call('GET', `/v1/customers?limit=1&starting_after=${firstId}`, 200);
    expect(next.json).toMatchObject({ has_more: false, data: [{ object: 'customer' }] });

    // An invoice: edited in draft, finalized, its amount frozen, paid after being marked uncollectible.
    const invoice = (
      await call('POST', '/v1/invoices', 201, { body: { customer: customer.id, currency: 'usd', amount_due: 2000 } })
    ).json as { id: string };
    expect(invoice).toMatchObject({ object: 'invoice', status: 'draft' });
    expect(invoice.id).toMatch(/^in_/);
    await call('POST', `/v1/invoices/${invoice.id}`, 200, { body: { amount_due: 2500 } });
    await call('POST', `/v1/invoices/${invoice.id}/finalize`, 200, { body: {} });
    const frozen = await call('POST', `/v1/invoices/${invoice.id}`, 409, { body: { amount_due: 1 } });
    expect((frozen.json as { error: { type: string } }).error.type).toBe('invalid_request_error');
    await call('POST', `/v1/invoices/${invoice.id}/mark_uncollectible`, 200, { body: {} });
    const paid = await call('POST', `/v1/invoices/${invoice.id}/pay`, 200, { body: {} });
    expect(paid.json).toMatchObject({ status: 'paid', amount_due: 2500 });
    await call('POST', `/v1/invoices/${invoice.id}/void`, 409, { body: {} });

    // expand[]: the customer inside the invoice, on a read and on a list (data.customer).
    const expanded = await call('GET', `/v1/invoices/${invoice.id}?expand[]=customer`, 200);
    expect(expanded.json).toMatchObject({ customer: { id: customer.id, object: 'customer', invoice_count: 1 } });
    const listed = await call('GET', `/v1/invoices?expand[]=data.customer&customer=${customer.id}`, 200);
    expect((listed.json as { data: Array<{ customer: unknown }> }).data[0]?.customer).toMatchObject({
      object: 'customer',
    });

    // Errors in Stripe's shape: a missing record, a bad key, a bad body.
    expect((await call('GET', '/v1/customers/cus_01J0000000000000000000000', 404)).json).toMatchObject({
      error: { type: 'invalid_request_error', code: 'not_found' },
    });
    const denied = await call('GET', '/v1/customers', 401, { headers: { authorization: 'Bearer sk_test_nope' } });
    expect((denied.json as { error: { type: string } }).error.type).toBe('authentication_error');
    // Prism refuses a body its document refuses before the server sees it: this one goes to the server itself.
    const invalid = await fetch(`${served.url}/v1/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customer: customer.id, currency: 'xxx', amount_due: 100 }),
    });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'currency' } });

    expect(prism.calls).toHaveLength(17);
    expect(prism.log()).not.toMatch(/✖|violation/i);
  });
});
