import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Parser } from '@asyncapi/parser';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAsyncApi } from '../src/emit/asyncapi.ts';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { knownEventNames } from '../src/parts/events/event-names.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import type { Plan } from '../src/plan/types.ts';
import { checkFile } from '../src/spec/check.ts';
import { call, planOf, type Served, servePlan } from './helpers/serve-spec.ts';

type Doc = Record<string, unknown>;

/** The value at a path of keys in parsed JSON (undefined when a step is missing). */
const dig = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Doc)[k] : undefined), value);
const entries = (value: unknown): Array<[string, unknown]> => Object.entries((value ?? {}) as Doc);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

const ROOT = resolve(import.meta.dirname, '..');
const EXAMPLES = ['examples/orders/service.yaml', 'examples/orders-ts/service.ts', 'examples/empty/service.yaml'];
const addFormats = addFormatsModule as unknown as <T>(ajv: T) => T;

const planOfFile = async (file: string): Promise<Plan> => {
  const { spec, dir } = await checkFile(file);
  if (!spec) throw new Error(`${file} has errors`);
  return buildPlan(spec, dir);
};

/** Validators of `#/components/schemas/<name>` of a document: draft-07 for AsyncAPI, 2020-12 for OpenAPI. */
const validatorOf = (doc: unknown, draft: '07' | '2020') => {
  const ajv = addFormats(draft === '07' ? new Ajv({ strict: false }) : new Ajv2020({ strict: false }));
  ajv.addFormat('decimal', true);
  ajv.addSchema(doc as Doc, 'doc.json');
  return (ref: unknown) => {
    const validate = ajv.getSchema(`doc.json${String(ref)}`);
    if (!validate) throw new Error(`no schema at ${ref}`);
    return (value: unknown) => (validate(value) ? [] : (validate.errors ?? []));
  };
};

describe('AsyncAPI document of every example', () => {
  it.each(EXAMPLES)('%s is valid AsyncAPI 3.0 and each message example matches its payload', async (file) => {
    const doc = buildAsyncApi(await planOfFile(file));
    const { document, diagnostics } = await new Parser().parse(doc as never);
    // Errors (0) and warnings (1); the one notice is that AsyncAPI 3.1 exists.
    expect(diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.path.join('/')}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
    const schemaAt = validatorOf(doc, '07');
    for (const [key, message] of entries(dig(doc, 'components', 'messages')))
      for (const example of list(dig(message, 'examples')))
        expect(schemaAt(dig(message, 'payload', '$ref'))(dig(example, 'payload')), key).toEqual([]);
  });
});

describe('AsyncAPI document of the orders example', () => {
  let plan: Plan;
  let doc: Doc;
  beforeAll(async () => {
    plan = await planOfFile('examples/orders/service.yaml');
    doc = buildAsyncApi(plan);
  });
  const parsed = async () => {
    const { document } = await new Parser().parse(doc as never);
    if (!document) throw new Error('the document does not parse');
    return document;
  };

  it('has a channel and a send operation per known event, addressed by its type', async () => {
    const document = await parsed();
    const names = knownEventNames(plan.spec);
    expect(names).toContain('Order.paid');
    expect(
      document
        .channels()
        .all()
        .map((c) => c.address()),
    ).toEqual(names);
    const operations = document.operations().all();
    expect(operations.map((o) => o.channels().all()[0]?.address())).toEqual(names);
    expect(operations.every((o) => o.isSend())).toBe(true);
    const server = document.servers().get('stream');
    expect([server?.protocol(), server?.pathname()]).toEqual(['http', '/events/stream']);
    expect(document.info().title()).toBe('Order desk');
    expect(document.info().description()).toMatch(/At least once.*keeps the event `id`/s);
    expect(document.info().description()).toContain('At least once');
  });

  it('gives each message the envelope with the data of its kind of event', async () => {
    const document = await parsed();
    const payload = (type: string) =>
      document
        .channels()
        .all()
        .find((c) => c.address() === type)
        ?.messages()
        .all()[0]
        ?.payload()
        ?.json();
    expect(payload('Order.paid')).toMatchObject({
      required: ['id', 'type', 'time', 'data'],
      properties: {
        type: { const: 'Order.paid' },
        data: {
          required: ['record', 'transition', 'from', 'to', 'input', 'actor'],
          properties: {
            record: {
              properties: { status: { enum: expect.arrayContaining(['paid']) }, callbackUrl: { format: 'uri' } },
            },
            transition: { enum: ['pay'] },
            from: { enum: ['placed'] },
            to: { enum: ['paid'] },
            input: { required: ['paymentRef'] },
          },
        },
      },
    });
    // cancel (by a caller) and expire (a timer) share Order.cancelled.
    expect(dig(payload('Order.cancelled'), 'properties', 'data', 'properties', 'transition', 'enum')).toEqual([
      'cancel',
      'expire',
    ]);
    expect(dig(payload('Order.updated'), 'properties', 'data', 'required')).toEqual(['record', 'changed', 'actor']);
    expect(payload('Customer.deleted')).toMatchObject({
      properties: { data: { properties: { record: { properties: { email: { format: 'email' } } } } } },
    });
    expect(dig(payload('Order.refundRequested'), 'properties', 'data')).toMatchObject({
      required: ['order'],
      properties: { reason: { maxLength: 500 } },
    });
  });

  it('shares its schema components with the OpenAPI document', () => {
    const openapi = buildOpenApi(plan);
    for (const [name, schema] of entries(dig(doc, 'components', 'schemas')))
      expect(dig(openapi, 'components', 'schemas', name), name).toEqual(schema);
  });
});

describe('OpenAPI webhooks', () => {
  const webhooksOf = (yaml: string) => dig(buildOpenApi(planOf(yaml)), 'webhooks');
  const spec = (events: string) => `
ninefold: 1
service: { name: hooks }
resources:
  Ticket:
    fields:
      title: { type: string, required: true }
      notify: { type: string, format: uri }
    states:
      field: status
      initial: open
      states: { open: {}, closed: {} }
      transitions: { close: { from: open, to: closed } }
${events}
`;

  it('has a POST per event of the orders example: the event JSON, the Standard Webhooks headers', async () => {
    const plan = await planOfFile('examples/orders/service.yaml');
    const doc = buildOpenApi(plan);
    expect(Object.keys(doc.webhooks as Doc)).toEqual(knownEventNames(plan.spec));
    const paid = dig(doc, 'webhooks', 'Order.paid', 'post');
    const media = dig(paid, 'requestBody', 'content', 'application/json');
    expect(dig(media, 'schema')).toEqual({ $ref: '#/components/schemas/OrderPaidEvent' });
    expect(validatorOf(doc, '2020')(dig(media, 'schema', '$ref'))(dig(media, 'example'))).toEqual([]);
    const header = (p: unknown) => dig(doc, 'components', 'parameters', String(dig(p, '$ref')).split('/').pop() ?? '');
    expect(list(dig(paid, 'parameters')).map((p) => dig(header(p), 'name'))).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    expect(Object.keys(dig(paid, 'responses') as Doc)).toEqual(['200', '410', 'default']);
    expect(dig(paid, 'description')).toContain('`callbackUrl` field of its Order');
    expect(dig(doc, 'webhooks', 'Order.placed', 'post', 'description')).not.toContain('callbackUrl');
  });

  it('lists only the events pushed somewhere, and nothing without events', () => {
    expect(webhooksOf(spec(''))).toBeUndefined();
    expect(Object.keys(webhooksOf(spec('events: { auto: true }')) as Doc)).toEqual([
      'Ticket.created',
      'Ticket.updated',
      'Ticket.deleted',
      'Ticket.closed',
    ]);
    expect(webhooksOf(spec('events: { auto: true, webhooks: { enabled: false } }'))).toBeUndefined();
    const some = spec(`events:
  auto: true
  webhooks: { events: [Ticket.created] }
  callbacks: { Ticket: { field: notify, events: [Ticket.closed] } }`);
    expect(Object.keys(webhooksOf(some) as Doc)).toEqual(['Ticket.created', 'Ticket.closed']);
  });
});

describe('the documents served and printed', () => {
  const yaml = `
ninefold: 1
service: { name: served-events }
resources:
  Ticket:
    fields:
      title: { type: string, required: true }
      secret: { type: string, writeOnly: true }
    states:
      field: status
      initial: open
      states: { open: {}, closed: {} }
      transitions:
        close: { from: open, to: closed, input: { reason: { type: string, required: true } } }
events:
  auto: true
`;
  let served: Served;
  beforeAll(async () => {
    served = await servePlan(planOf(yaml));
  });
  afterAll(() => served.close({ remove: true }));

  it('serves /asyncapi.json, whose schemas hold the events the service emits', async () => {
    const answer = await call(served.url, 'GET', '/asyncapi.json');
    expect(answer.status).toBe(200);
    const doc = answer.body;
    expect(doc).toEqual(JSON.parse(JSON.stringify(buildAsyncApi(served.plan))));
    const created = await call(served.url, 'POST', '/tickets', { json: { title: 'Printer', secret: 's3' } });
    const id = String(dig(created.body, 'id'));
    await call(served.url, 'PATCH', `/tickets/${id}`, {
      json: { title: 'Printer on fire' },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    await call(served.url, 'POST', `/tickets/${id}/close`, { json: { reason: 'fixed' } });
    await call(served.url, 'DELETE', `/tickets/${id}`);
    const events = list(dig((await call(served.url, 'GET', '/events')).body, 'data'));
    expect(events.map((e) => dig(e, 'type'))).toEqual([
      'Ticket.created',
      'Ticket.updated',
      'Ticket.closed',
      'Ticket.deleted',
    ]);
    const schemaAt = validatorOf(doc, '07');
    for (const event of events)
      expect(
        schemaAt(dig(doc, 'components', 'messages', String(dig(event, 'type')), 'payload', '$ref'))(event),
        JSON.stringify(event),
      ).toEqual([]);
  });

  it('guards /asyncapi.json like /openapi.json when auth.public leaves openapi out', async () => {
    const closed = await servePlan(
      planOf(`${yaml}
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  public: [health]
`),
    );
    try {
      for (const path of ['/openapi.json', '/asyncapi.json'])
        expect((await call(closed.url, 'GET', path)).status, path).toBe(401);
    } finally {
      await closed.close({ remove: true });
    }
  });

  // dist/ is built once by test/global-setup.ts.
  it('prints the same document from `ninefold asyncapi`', async () => {
    const file = 'examples/orders/service.yaml';
    const run = spawnSync(process.execPath, [join(ROOT, 'bin/ninefold.js'), 'asyncapi', file], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(JSON.parse(JSON.stringify(buildAsyncApi(await planOfFile(file)))));
  });
});
