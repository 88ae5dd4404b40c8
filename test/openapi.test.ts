import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { createServer } from '../src/runtime/server.ts';
import { checkFile } from '../src/spec/check.ts';
import { SqliteStore } from '../src/storage/index.ts';
import { waitFor } from './helpers/wait-for.ts';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.ts';

type Json = Record<string, unknown>;
type Check = (operationId: string, response: Response, expected: number, body: unknown) => void;

const specFiles = readdirSync('examples').flatMap((dir) =>
  ['service.yaml', 'service.ts'].map((f) => join('examples', dir, f)).filter((f) => existsSync(f)),
);

const documentOf = async (file: string): Promise<Json | undefined> => {
  const { spec, dir } = await checkFile(file);
  return spec ? (buildOpenApi(buildPlan(spec, dir)) as Json) : undefined;
};

const operations = (doc: Json): Array<[string, string, Json]> =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [method, path, op] as [string, string, Json]),
  );

describe('OpenAPI document of every example', () => {
  it.each(specFiles)('%s is valid OpenAPI 3.1 with an operationId and an example on every operation', async (file) => {
    const doc = await documentOf(file);
    if (!doc) return; // only specs that pass the checks have a plan
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const ids = operations(doc).map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [method, path, op] of operations(doc)) {
      expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z0-9]*$/);
      const ok = Object.entries(op.responses as Record<string, Json>).find(([s]) => s.startsWith('2'));
      const content = ok?.[1].content as Record<string, Json> | undefined;
      for (const media of Object.values(content ?? {})) expect(media.example, `${method} ${path}`).toBeDefined();
    }
  });

  it('names the operations of the orders example as a client expects', async () => {
    const doc = (await documentOf('examples/orders/service.yaml')) as Json;
    const ids = operations(doc).map(([, , op]) => op.operationId);
    expect(ids).toEqual(
      expect.arrayContaining([
        'listOrders',
        'createOrder',
        'getOrder',
        'updateOrder',
        'deleteOrder',
        'customerSummary',
      ]),
    );
    const list = operations(doc).find(([, , op]) => op.operationId === 'listOrders')?.[2] as Json;
    const names = (list.parameters as Json[]).map((p) => p.name ?? p.$ref);
    expect(names).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'sort', 'expand', 'count', 'status', 'status[in]', 'customer']),
    );
    const create = operations(doc).find(([, , op]) => op.operationId === 'createOrder')?.[2] as Json;
    expect(Object.keys(create.responses as Json)).toEqual([
      '201',
      '400',
      '401',
      '403',
      '408',
      '409',
      '413',
      '414',
      '415',
      '422',
      '429',
      '500',
      '503',
    ]);
  });
});

// --- A typed client, generated from the document, against the real server -------------------------------------

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/** The client script: type-checked against the generated types, then run. It reports each answer to `check`. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './orders-api.ts';

export type Check = (operationId: string, response: Response, expected: number, body: unknown) => void;

export const roundTrip = async (baseUrl: string, apiKey: string, check: Check, hookUrl: string): Promise<void> => {
  const anonymous = createClient<paths>({ baseUrl });
  const refused = await anonymous.GET('/orders', {});
  check('listOrders', refused.response, 401, refused.error);
  const client = createClient<paths>({ baseUrl, headers: { 'X-Api-Key': apiKey } });

  const c = await client.POST('/customers', {
    body: { email: 'jane@example.com', fullName: 'Jane Doe', tier: 'pro', phone: '+44 20 7946 0958' },
    params: { header: { 'Idempotency-Key': 'create-jane' } },
  });
  check('createCustomer', c.response, 201, c.data ?? c.error);
  const customer: components['schemas']['Customer'] = c.data!;
  const again = await client.POST('/customers', {
    body: { email: 'jane@example.com', fullName: 'Jane Doe', tier: 'pro', phone: '+44 20 7946 0958' },
    params: { header: { 'Idempotency-Key': 'create-jane' } },
  });
  check('createCustomer', again.response, 201, again.data ?? again.error);
  if (again.response.headers.get('idempotent-replayed') !== 'true' || again.data?.id !== customer.id) throw new Error('not replayed');
  const dup = await client.POST('/customers', { body: { email: 'jane@example.com', fullName: 'Someone Else' } });
  check('createCustomer', dup.response, 409, dup.error);
  const other = await client.POST('/customers', { body: { email: 'max@example.com', fullName: 'Max Free' } });
  check('createCustomer', other.response, 201, other.data ?? other.error);

  const got = await client.GET('/customers/{id}', { params: { path: { id: customer.id } } });
  check('getCustomer', got.response, 200, got.data ?? got.error);
  const customers = await client.GET('/customers', { params: { query: { tier: 'pro', sort: '-fullName', count: true } } });
  check('listCustomers', customers.response, 200, customers.data ?? customers.error);
  if (customers.data?.total !== 1 || customers.data.data[0]?.id !== customer.id) throw new Error('customer filter');
  const etag = got.response.headers.get('etag') ?? '';
  const patched = await client.PATCH('/customers/{id}', {
    params: { path: { id: customer.id }, header: { 'If-Match': etag } },
    body: { fullName: 'Jane Q. Doe' },
  });
  check('updateCustomer', patched.response, 200, patched.data ?? patched.error);
  if (patched.data?.fullName !== 'Jane Q. Doe') throw new Error('not patched');
  const stale = await client.PATCH('/customers/{id}', {
    params: { path: { id: customer.id }, header: { 'If-Match': etag } },
    body: { tier: 'enterprise' },
  });
  check('updateCustomer', stale.response, 412, stale.error);
  const invalid = await client.PATCH('/customers/{id}', {
    params: { path: { id: customer.id } },
    body: { email: 'not an email' },
  });
  check('updateCustomer', invalid.response, 422, invalid.error);

  const p = await client.POST('/products', {
    body: { sku: 'MUG-01', name: 'Mug', price: '12.50', stock: 3, tags: ['kitchen', 'new'] },
  });
  check('createProduct', p.response, 201, p.data ?? p.error);
  const product = p.data!;
  const cheap = await client.POST('/products', { body: { sku: 'PEN-01', name: 'Pen', price: '1.20' } });
  check('createProduct', cheap.response, 201, cheap.data ?? cheap.error);
  const products = await client.GET('/products', {
    params: { query: { 'tags[contains]': 'kitchen', sort: '-price', limit: 10 } },
  });
  check('listProducts', products.response, 200, products.data ?? products.error);
  if (products.data?.data.length !== 1 || products.data.data[0]?.sku !== 'MUG-01') throw new Error('product filter');
  const bySku = await client.GET('/products', { params: { query: { 'sku[prefix]': 'PEN', sort: 'name' } } });
  check('listProducts', bySku.response, 200, bySku.data ?? bySku.error);
  if (bySku.data?.data[0]?.id !== cheap.data?.id) throw new Error('prefix filter');
  const badSort = await client.GET('/products', { params: { query: { sort: 'stock' } } });
  check('listProducts', badSort.response, 400, badSort.error);
  const productTag = await client.GET('/products/{id}', { params: { path: { id: product.id } } });
  const renamed = await client.PATCH('/products/{id}', {
    params: { path: { id: product.id }, header: { 'If-Match': productTag.response.headers.get('etag') ?? '' } },
    body: { name: 'Big mug', description: null },
  });
  check('updateProduct', renamed.response, 200, renamed.data ?? renamed.error);

  const o = await client.POST('/orders', {
    body: { customer: customer.id, lines: [{ product: product.id, qty: 2 }], note: 'Gift wrap, please.' },
  });
  check('createOrder', o.response, 201, o.data ?? o.error);
  const order = o.data!;
  if (order.status !== 'cart' || !o.response.headers.get('location')?.endsWith('/orders/' + order.id)) throw new Error('order');
  const ghost = await client.POST('/orders', { body: { customer: 'cus_01JD7X3K9Q2M4N6P8R0S2T4V6W' } });
  check('createOrder', ghost.response, 422, ghost.error);
  const orders = await client.GET('/orders', {
    params: { query: { customer: customer.id, status: 'cart', expand: 'customer', sort: '-createdAt' } },
  });
  check('listOrders', orders.response, 200, orders.data ?? orders.error);
  const listed = orders.data?.data[0]?.customer;
  if (typeof listed !== 'object' || listed.id !== customer.id) throw new Error('expand');
  const gotOrder = await client.GET('/orders/{id}', { params: { path: { id: order.id } } });
  check('getOrder', gotOrder.response, 200, gotOrder.data ?? gotOrder.error);
  const noted = await client.PATCH('/orders/{id}', {
    params: { path: { id: order.id }, header: { 'If-Match': gotOrder.response.headers.get('etag') ?? '' } },
    body: { note: 'No gift wrap.' },
  });
  check('updateOrder', noted.response, 200, noted.data ?? noted.error);

  const summary = await client.GET('/customers/{id}/summary', { params: { path: { id: customer.id } } });
  check('customerSummary', summary.response, 200, summary.data ?? summary.error);
  if (summary.data?.orders !== 1 || summary.data.open !== 1) throw new Error('summary');
  const nobody = await client.GET('/customers/{id}/summary', { params: { path: { id: 'cus_01JD7X3K9Q2M4N6P8R0S2T4V6W' } } });
  check('customerSummary', nobody.response, 404, nobody.error);
  const refund = await client.POST('/orders/{id}/refund-request', {
    params: { path: { id: order.id } },
    body: { reason: 'Changed my mind.' },
  });
  check('requestRefund', refund.response, 409, refund.error);

  const inUse = await client.DELETE('/customers/{id}', { params: { path: { id: customer.id } } });
  check('deleteCustomer', inUse.response, 409, inUse.error);
  const removed = await client.DELETE('/orders/{id}', {
    params: { path: { id: order.id }, header: { 'If-Match': noted.response.headers.get('etag') ?? '' } },
  });
  check('deleteOrder', removed.response, 204, removed.error);
  const gone = await client.GET('/orders/{id}', { params: { path: { id: order.id } } });
  check('getOrder', gone.response, 404, gone.error);
  const dp = await client.DELETE('/products/{id}', { params: { path: { id: product.id } } });
  check('deleteProduct', dp.response, 204, dp.error);
  const dc = await client.DELETE('/customers/{id}', { params: { path: { id: customer.id } } });
  check('deleteCustomer', dc.response, 204, dc.error);

  // The built-in APIs: a webhook endpoint registered, listed and managed; the event log read.
  const hook = await client.POST('/webhook-endpoints', {
    body: { url: hookUrl, events: ['Customer.created'], description: 'CRM sync' },
  });
  check('createWebhookEndpoint', hook.response, 201, hook.data ?? hook.error);
  const endpoint: components['schemas']['WebhookEndpointCreated'] = hook.data!;
  if (!endpoint.secret.startsWith('whsec_')) throw new Error('no secret');
  const badHook = await client.POST('/webhook-endpoints', { body: { url: hookUrl, events: ['Nothing.happened' as never] } });
  check('createWebhookEndpoint', badHook.response, 422, badHook.error);
  const hooks = await client.GET('/webhook-endpoints');
  check('listWebhookEndpoints', hooks.response, 200, hooks.data ?? hooks.error);
  if (hooks.data?.data[0]?.id !== endpoint.id) throw new Error('endpoint not listed');
  const created = await client.POST('/customers', { body: { email: 'ada@example.com', fullName: 'Ada Hook' } });
  check('createCustomer', created.response, 201, created.data ?? created.error);
  const oneHook = await client.GET('/webhook-endpoints/{id}', { params: { path: { id: endpoint.id } } });
  check('getWebhookEndpoint', oneHook.response, 200, oneHook.data ?? oneHook.error);
  const quiet = await client.PATCH('/webhook-endpoints/{id}', {
    params: { path: { id: endpoint.id } },
    body: { description: 'CRM sync (EU)' },
  });
  check('updateWebhookEndpoint', quiet.response, 200, quiet.data ?? quiet.error);
  const rotated = await client.POST('/webhook-endpoints/{id}/rotate-secret', { params: { path: { id: endpoint.id } } });
  check('rotateWebhookSecret', rotated.response, 200, rotated.data ?? rotated.error);
  const deliveries = await client.GET('/webhook-endpoints/{id}/deliveries', { params: { path: { id: endpoint.id } } });
  check('listWebhookDeliveries', deliveries.response, 200, deliveries.data ?? deliveries.error);

  const log = await client.GET('/events', { params: { query: { type: 'Customer.created', limit: 10 } } });
  check('listEvents', log.response, 200, log.data ?? log.error);
  const first: components['schemas']['Event'] | undefined = log.data?.data.find(
    (e) => (e.data as { record?: { id?: string } }).record?.id === created.data?.id,
  );
  if (!first) throw new Error('the event log lacks Customer.created');
  const one = await client.GET('/events/{id}', { params: { path: { id: first.id } } });
  check('getEvent', one.response, 200, one.data ?? one.error);
  const missing = await client.GET('/events/{id}', { params: { path: { id: 'evt_01JD7X3K9Q2M4N6P8R0S2T4V6W' } } });
  check('getEvent', missing.response, 404, missing.error);
  const badType = await client.GET('/events', { params: { query: { type: 'Nothing.happened' } } });
  check('listEvents', badType.response, 400, badType.error);
};
`;

describe('typed client round trip: orders example', () => {
  const work = resolve('.tmp', `openapi-client-${process.pid}`);
  const dbPath = join(tmpdir(), `ninefold-openapi-${process.pid}-${Date.now()}.db`);
  let doc: Json;
  let app: FastifyInstance;
  let store: SqliteStore;
  let baseUrl: string;
  let receiver: Receiver;

  beforeAll(async () => {
    const { spec, dir } = await checkFile('examples/orders/service.yaml');
    if (!spec) throw new Error('the orders example does not pass its checks');
    // Webhooks go to a receiver on this machine's loopback, which the example rightly refuses.
    const webhooks = { ...spec.events?.webhooks, allowPrivateTargets: true };
    const plan = buildPlan({ ...spec, events: { ...spec.events, webhooks } }, dir);
    receiver = await startReceiver();
    doc = JSON.parse(JSON.stringify(buildOpenApi(plan))) as Json;
    await mkdir(work, { recursive: true });
    await writeFile(join(work, 'orders-api.ts'), astToString(await openapiTS(JSON.parse(JSON.stringify(doc)))));
    await writeFile(join(work, 'client.ts'), CLIENT);
    store = new SqliteStore({ path: dbPath });
    await store.migrate(plan);
    app = await createServer(plan, { store, logLevel: 'silent' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });

  afterAll(async () => {
    await app?.close();
    await store?.close();
    await receiver?.close();
    await rm(work, { recursive: true, force: true });
    for (const suffix of ['', '-wal', '-shm']) await rm(`${dbPath}${suffix}`, { force: true });
  });

  it('the client type-checks against the generated types', () => {
    const program = ts.createProgram([join(work, 'client.ts')], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowImportingTsExtensions: true,
      types: ['node'],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });

  it('every answer of the real server has a documented status, headers and body', async () => {
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addFormat('decimal', true);
    ajv.addSchema(doc, 'openapi.json');
    const components = doc.components as Record<string, Record<string, Json>>;
    const byId = new Map(operations(doc).map(([, , op]) => [op.operationId as string, op]));
    const seen: string[] = [];
    const check: Check = (operationId, response, expected, body) => {
      const label = `${operationId} → ${response.status} ${JSON.stringify(body)}`;
      seen.push(`${operationId} ${response.status}`);
      expect(response.status, label).toBe(expected);
      let documented = (byId.get(operationId)?.responses as Record<string, Json>)?.[String(response.status)];
      expect(documented, `${label} is not documented`).toBeDefined();
      if (typeof documented?.$ref === 'string')
        documented = components.responses?.[documented.$ref.split('/').pop() ?? ''];
      for (const header of Object.keys((documented?.headers as Json) ?? {})) {
        if (header !== 'Idempotent-Replayed')
          expect(response.headers.get(header), `${label}: ${header}`).not.toBeNull();
      }
      const content = documented?.content as Record<string, Json> | undefined;
      if (!content) {
        expect(body, label).toBeUndefined();
        return;
      }
      const [type, media] = Object.entries(content)[0] ?? [];
      expect(response.headers.get('content-type'), label).toContain(type);
      const ref = String((media?.schema as Json | undefined)?.$ref);
      const validate = ajv.getSchema(`openapi.json${ref}`);
      expect(validate?.(body), `${label}: ${JSON.stringify(validate?.errors)}`).toBe(true);
    };
    const { roundTrip } = (await import(pathToFileURL(join(work, 'client.ts')).href)) as {
      roundTrip: (baseUrl: string, apiKey: string, check: Check, hookUrl: string) => Promise<void>;
    };
    const staff = await issueApiKey(store, { subject: 'staff-1', roles: ['admin', 'support'] });
    await roundTrip(baseUrl, staff.key, check, receiver.url);
    expect(seen).toContain('customerSummary 200');
    expect(seen).toEqual(expect.arrayContaining(['createWebhookEndpoint 201', 'listEvents 200', 'getEvent 200']));
  });

  it('documents the webhook a receiver gets: a real delivery passes the documented schema, read-only rules included', async () => {
    await waitFor(() => receiver.hits.length > 0, 'a delivery of Customer.created');
    const hit = receiver.hits[0];
    const body = JSON.parse(hit?.body ?? 'null') as Json;
    expect(body.type).toBe('Customer.created');
    const webhook = (doc.webhooks as Record<string, { post: Json }>)['Customer.created']?.post as Json;
    const schema = ((webhook.requestBody as Json).content as Record<string, Json>)['application/json']?.schema as Json;
    // A request validator refuses read-only members in a request body, and a delivery is a request.
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addFormat('decimal', true);
    ajv.removeKeyword('readOnly');
    ajv.addKeyword({ keyword: 'readOnly', validate: (readOnly: boolean) => !readOnly, errors: false });
    ajv.addSchema(doc, 'openapi.json');
    const validate = ajv.compile({ $ref: `openapi.json${String(schema.$ref)}` });
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  });
});
