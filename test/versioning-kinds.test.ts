import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkSource } from '../src/spec/check.ts';
import { parseSpecText } from '../src/spec/load.ts';
import { call, freshDatabase, type JsonAnswer, type Served, servePlan } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';
import { type Receiver, startReceiver } from './helpers/webhook-receiver.ts';

/**
 * One change of every kind between v1 and v2 (test/fixtures/versioning-kinds): a field made required, an enum value
 * added, a field moved into an object, a transform function, an operation, a transition and an event added and
 * removed, an error code and status changed; v3 renames on top.
 */
const DIR = 'test/fixtures/versioning-kinds';
const TEXT = readFileSync(`${DIR}/service.yaml`, 'utf8');
type Scheme = 'header' | 'path' | 'query' | 'media-type';

const serveKinds = async (scheme: Scheme, webhookPollMs?: number): Promise<Served> => {
  const text = TEXT.replace('scheme: header', `scheme: ${scheme}`);
  const checked = checkSource({ ...parseSpecText(text, `${DIR}/service.yaml`), dir: DIR });
  expect(checked.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  const plan = buildPlan(checked.spec as NonNullable<typeof checked.spec>, DIR);
  return servePlan(plan, { dbPath: freshDatabase(), ...(webhookPollMs ? { webhookPollMs } : {}) });
};

/** A request in one version, under one scheme. */
const caller = (served: Served, scheme: Scheme) => (version: string) => ({
  send: (method: string, path: string, json?: unknown): Promise<JsonAnswer> => {
    const at = scheme === 'path' ? `/${version}${path}` : path;
    const url = scheme === 'query' ? `${at}${at.includes('?') ? '&' : '?'}version=${version}` : at;
    const headers: Record<string, string> =
      scheme === 'header'
        ? { 'api-version': version }
        : scheme === 'media-type'
          ? { accept: `application/vnd.kinds+json; version=${version}` }
          : {};
    return call(served.url, method, url, { ...(json === undefined ? {} : { json }), headers });
  },
});

const ORIGINAL = { firstName: 'Ada', lastName: 'King Lovelace', tier: 'pro', street: 'St James Sq' };

describe.each(['header', 'path', 'query', 'media-type'] as const)('change kinds round-trip (%s scheme)', (scheme) => {
  let served: Served;
  let at: ReturnType<typeof caller>;
  beforeAll(async () => {
    served = await serveKinds(scheme);
    at = caller(served, scheme);
  });
  afterAll(() => served?.close({ remove: true }));

  it('written in v1, read in v3, read in v1: the original', async () => {
    const made = await at('v1').send('POST', '/customers', ORIGINAL);
    expect(made.status).toBe(201);
    expect(made.headers.get('api-version')).toBe('v1');
    const { id } = made.body;
    const newest = await at('v3').send('GET', `/customers/${id}`);
    // transform (two parts → one), require (the default filled in), move (street → address.street).
    expect(newest.body).toMatchObject({
      displayName: 'Ada King Lovelace',
      country: 'GB',
      tier: 'pro',
      address: { street: 'St James Sq' },
    });
    for (const key of ['firstName', 'lastName', 'street', 'fullName']) expect(newest.body).not.toHaveProperty(key);
    const oldest = await at('v1').send('GET', `/customers/${id}`);
    expect(oldest.body).toMatchObject({ ...ORIGINAL, country: 'GB' });
    for (const key of ['displayName', 'fullName', 'address']) expect(oldest.body).not.toHaveProperty(key);
  });

  it('enum-add: v1 cannot send the new value, and a record holding it reads as the fallback there', async () => {
    const refused = await at('v1').send('POST', '/customers', { ...ORIGINAL, tier: 'enterprise' });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code])).toEqual([
      ['#/tier', 'invalid_enum'],
    ]);
    const made = await at('v3').send('POST', '/customers', { displayName: 'Bo', country: 'FR', tier: 'enterprise' });
    expect(made.status).toBe(201);
    expect((await at('v1').send('GET', `/customers/${made.body.id}`)).body.tier).toBe('pro');
    expect((await at('v2').send('GET', `/customers/${made.body.id}`)).body.tier).toBe('enterprise');
    const filtered = await at('v1').send('GET', '/customers?tier=enterprise');
    expect([filtered.status, filtered.body.code]).toEqual([400, 'invalid_filter']);
    expect((await at('v2').send('GET', '/customers?tier=enterprise')).body.data).toHaveLength(1);
  });

  it('operations and error codes: v1 lacks what v2 added and keeps what v2 removed', async () => {
    const { id } = (await at('v3').send('POST', '/customers', { displayName: 'Hal', country: 'NL' })).body;
    expect((await at('v1').send('POST', `/customers/${id}/archive`)).status).toBe(404);
    expect((await at('v2').send('POST', `/customers/${id}/archive`)).status).toBe(200);
    const order = (await at('v1').send('POST', '/orders', { customer: id })).body;
    expect((await at('v1').send('POST', `/orders/${order.id}/ship`)).status).toBe(200);
    const again = await at('v1').send('POST', `/orders/${order.id}/ship`);
    expect([again.status, again.body.code]).toEqual([400, 'transition_refused']);
    expect((await at('v3').send('DELETE', `/customers/${id}`)).status).toBe(404);
    expect((await at('v1').send('DELETE', `/customers/${id}`)).status).toBe(409);
  });
});

describe('change kinds: routes, transitions, errors and events per version (header scheme)', () => {
  let served: Served;
  let at: ReturnType<typeof caller>;
  let oldHook: Receiver;
  let newHook: Receiver;
  beforeAll(async () => {
    served = await serveKinds('header', 50);
    at = caller(served, 'header');
    oldHook = await startReceiver();
    newHook = await startReceiver();
  });
  afterAll(async () => {
    await served?.close({ remove: true });
    await oldHook?.close();
    await newHook?.close();
  });

  const customer = async () => (await at('v3').send('POST', '/customers', { displayName: 'Cy', country: 'DE' })).body;
  const order = async () => (await at('v3').send('POST', '/orders', { customer: (await customer()).id })).body;

  it('require: v1 gets the default; from v2 on the field is required', async () => {
    const made = await at('v1').send('POST', '/customers', { firstName: 'Di' });
    expect(made.status).toBe(201);
    expect(made.body.country).toBe('GB');
    // An update in v1 leaves what is stored alone.
    const fr = await at('v3').send('POST', '/customers', { displayName: 'Ed', country: 'FR' });
    const patched = await at('v1').send('PATCH', `/customers/${fr.body.id}`, { firstName: 'Ed' });
    expect(patched.body.country).toBe('FR');
    const missing = await at('v2').send('POST', '/customers', { fullName: 'Fay' });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['#/country']);
  });

  it('move: a v1 error about the moved field points at /street', async () => {
    const long = await at('v1').send('POST', '/customers', { firstName: 'Gil', street: 'x'.repeat(41) });
    expect(long.status).toBe(422);
    expect(long.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['#/street']);
    const v3 = await at('v3').send('POST', '/customers', {
      displayName: 'Gil',
      country: 'GB',
      address: { street: 'x'.repeat(41) },
    });
    expect(v3.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['#/address/street']);
  });

  it('add-operation: 404 not_found in v1, served from v2', async () => {
    const { id } = await customer();
    const old = await at('v1').send('POST', `/customers/${id}/archive`);
    expect(old.status).toBe(404);
    expect(old.body.code).toBe('not_found');
    const now = await at('v2').send('POST', `/customers/${id}/archive`);
    expect(now.status).toBe(200);
    expect(now.body).toEqual({ id, archived: true });
  });

  it('remove-operation: still served to v1, 404 in v2 and later', async () => {
    const { id } = await customer();
    for (const v of ['v2', 'v3']) expect((await at(v).send('DELETE', `/customers/${id}`)).status).toBe(404);
    expect((await at('v1').send('DELETE', `/customers/${id}`)).status).toBe(204);
    expect((await at('v3').send('GET', `/customers/${id}`)).status).toBe(404);
  });

  it('add-transition and remove-transition: each version has its own, and allowedTransitions speaks it', async () => {
    const a = await order();
    expect((await at('v1').send('POST', `/orders/${a.id}/archive`)).status).toBe(404);
    expect((await at('v3').send('POST', `/orders/${a.id}/cancel`)).status).toBe(404);
    const cancelled = await at('v1').send('POST', `/orders/${a.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const b = await order();
    expect((await at('v3').send('POST', `/orders/${b.id}/ship`)).status).toBe(200);
    const newer = await at('v3').send('POST', `/orders/${b.id}/ship`);
    expect(newer.status).toBe(409);
    expect(newer.body).toMatchObject({ code: 'invalid_transition', allowedTransitions: ['archive'] });
    // error: v1 is answered the code and status it had.
    const older = await at('v1').send('POST', `/orders/${b.id}/ship`);
    expect(older.status).toBe(400);
    expect(older.body).toMatchObject({ code: 'transition_refused', status: 400, allowedTransitions: [] });
    expect((await at('v3').send('POST', `/orders/${b.id}/archive`)).body.status).toBe('archived');
  });

  it('add-event and remove-event: subscriptions are checked per version, deliveries carry only its types', async () => {
    const refused = await at('v1').send('POST', '/webhook-endpoints', { url: oldHook.url, events: ['Order.archived'] });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].pointer).toBe('#/events');
    const gone = await at('v3').send('POST', '/webhook-endpoints', { url: newHook.url, events: ['Order.cancelled'] });
    expect(gone.status).toBe(422);
    expect((await at('v1').send('POST', '/webhook-endpoints', { url: oldHook.url })).status).toBe(201);
    expect((await at('v3').send('POST', '/webhook-endpoints', { url: newHook.url })).status).toBe(201);
    const a = await order();
    await at('v1').send('POST', `/orders/${a.id}/cancel`);
    const b = await order();
    await at('v3').send('POST', `/orders/${b.id}/archive`);
    // Deliveries keep their order per endpoint: once the last change reached both, the earlier ones did too.
    const last = await customer();
    const types = (r: Receiver) =>
      r.hits.map((h) => JSON.parse(h.body) as { type: string; data: { record?: { id?: string } } });
    const reached = (r: Receiver) =>
      types(r).some((e) => e.type === 'Customer.created' && e.data.record?.id === last.id);
    await waitFor(() => reached(oldHook) && reached(newHook), 'the last event at both endpoints');
    const oldTypes = types(oldHook).map((e) => e.type);
    const newTypes = types(newHook).map((e) => e.type);
    expect(oldTypes).toContain('Order.cancelled');
    expect(oldTypes).not.toContain('Order.archived');
    expect(newTypes).toContain('Order.archived');
    expect(newTypes).not.toContain('Order.cancelled');
    // The event log shows each version only the event types it has.
    const logged = async (v: 'v1' | 'v3', type: string) => {
      const answer = await at(v).send('GET', `/events?type=${type}`);
      expect(answer.status).toBe(200);
      return (answer.body.data as Array<{ id: string; type: string }>).map((e) => e.type);
    };
    expect(await logged('v1', 'Order.cancelled')).toContain('Order.cancelled');
    expect(await logged('v1', 'Order.archived')).toEqual([]);
    expect(await logged('v3', 'Order.archived')).toContain('Order.archived');
    expect(await logged('v3', 'Order.cancelled')).toEqual([]);
    const archived = (await at('v3').send('GET', '/events?type=Order.archived')).body.data[0].id as string;
    expect((await at('v1').send('GET', `/events/${archived}`)).status).toBe(404);
    expect((await at('v3').send('GET', `/events/${archived}`)).status).toBe(200);
  });

  it('the per-version OpenAPI documents show each version', async () => {
    const v1 = (await call(served.url, 'GET', '/openapi/v1.json')).body;
    const v3 = (await call(served.url, 'GET', '/openapi/v3.json')).body;
    const newest = (await call(served.url, 'GET', '/openapi.json')).body;
    expect(Object.keys(v1.paths)).not.toContain('/customers/{id}/archive');
    expect(Object.keys(v3.paths)).toContain('/customers/{id}/archive');
    expect(Object.keys(v1.paths)).not.toContain('/orders/{id}/archive');
    expect(Object.keys(v3.paths)).not.toContain('/orders/{id}/cancel');
    expect(v1.paths['/customers/{id}'].delete).toBeDefined();
    expect(v3.paths['/customers/{id}'].delete).toBeUndefined();
    expect(newest.paths['/customers/{id}'].delete).toBeUndefined();
    const schemaOf = (doc: {
      components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }>; required?: string[] }> };
    }) => doc.components.schemas.Customer as { properties: Record<string, { enum?: string[] }>; required?: string[] };
    expect(schemaOf(v1).properties.tier?.enum).toEqual(['free', 'pro']);
    expect(schemaOf(v3).properties.tier?.enum).toEqual(['free', 'pro', 'enterprise']);
    expect(Object.keys(schemaOf(v1).properties)).toContain('street');
    expect(Object.keys(schemaOf(v1).properties)).not.toContain('address');
    expect(JSON.stringify(v1)).toContain('transition_refused');
  });

  it('the nine-part document says each change in words', async () => {
    const page = await call(served.url, 'GET', '/docs/spec');
    expect(page.status).toBe(200);
    const text = page.text.replace(/<[^>]+>/g, '');
    for (const words of [
      'country is required; a request of an earlier version without it gets &quot;GB&quot;',
      'tier may be enterprise; earlier versions may not send it and see pro instead',
      'street moves into address.street',
      'POST /customers/{id}/archive is new; earlier versions answer 404',
      'Customer.delete is removed; it answers 404 from this version on',
      'the transition archive is new',
      'the event Order.cancelled is removed; only webhook endpoints of earlier versions still get it',
      'the error transition_refused is answered as invalid_transition; earlier versions still get transition_refused with status 400',
      'records of earlier versions pass through ./name-parts.ts',
    ])
      expect(text).toContain(words);
  });
});
