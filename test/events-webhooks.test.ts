import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/parts/auth/keys.ts';
import { call, planOf, type Served, servePlan, TICKET_KEY_AUTH } from './helpers/serve-spec.ts';
import { waitFor } from './helpers/wait-for.ts';

// Webhooks end to end: a receiver on loopback (the spec allows private targets, as tests need), deliveries
// verified with the standardwebhooks package.
const SPEC = (allowPrivate: boolean) => `
ninefold: 1
service: { name: hooks-test }
resources:
  Ticket:
    fields:
      title: { type: string, required: true }
      owner: { type: string }
    states:
      field: status
      initial: open
      states: { open: {}, closed: {} }
      final: [closed]
      transitions:
        close: { from: open, to: closed }
${TICKET_KEY_AUTH}
events:
  auto: true
  webhooks: { retry: [100ms, 200ms], allowPrivateTargets: ${allowPrivate} }
endpoints:
  Ticket: { operations: [list, get, create, update] }
`;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver whose answers the test programs: one status per call, then 200. */
const receiver = async () => {
  const got: Received[] = [];
  const answers: number[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      const status = answers.shift() ?? 200;
      if (status === 429) res.setHeader('retry-after', '0');
      res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { got, answers, url, close: () => new Promise<void>((ok) => server.close(() => ok())) };
};

/** Waits until the receiver has got what `check` asks for. */
const until = (check: () => boolean) => waitFor(check, () => `the receiver to get more; it has ${r.got.length}`);

let s: Served;
let ann: Record<string, string>;
let bob: Record<string, string>;
let r: Awaited<ReturnType<typeof receiver>>;
beforeAll(async () => {
  s = await servePlan(planOf(SPEC(true)), { webhookPollMs: 50 });
  ann = { 'x-api-key': (await issueApiKey(s.store, { subject: 'ann', roles: ['agent'] })).key };
  bob = { 'x-api-key': (await issueApiKey(s.store, { subject: 'bob', roles: ['agent'] })).key };
  r = await receiver();
});
afterAll(async () => {
  await s.close({ remove: true });
  await r.close();
});

describe('webhooks', () => {
  let endpoint: { id: string; secret: string };

  it('registers an endpoint and shows its secret once', async () => {
    const made = await call(s.url, 'POST', '/webhook-endpoints', { json: { url: r.url }, headers: ann });
    expect(made.status).toBe(201);
    expect(made.body.secret).toMatch(/^whsec_/);
    endpoint = made.body;
    const again = await call(s.url, 'GET', `/webhook-endpoints/${endpoint.id}`, { headers: ann });
    expect(again.status).toBe(200);
    expect(again.body).not.toHaveProperty('secret');
    expect((await call(s.url, 'GET', `/webhook-endpoints/${endpoint.id}`, { headers: bob })).status).toBe(404);
  });

  it('delivers each committed event, signed the Standard Webhooks way, only the owner’s records', async () => {
    const t = await call(s.url, 'POST', '/tickets', { json: { title: 'printer' }, headers: ann });
    await call(s.url, 'POST', '/tickets', { json: { title: 'not ann’s' }, headers: bob });
    await call(s.url, 'POST', `/tickets/${t.body.id}/close`, { headers: ann });
    await until(() => r.got.length >= 2);
    await new Promise((ok) => setTimeout(ok, 200));
    const wh = new Webhook(endpoint.secret);
    const types = r.got.map((g) => {
      const verified = wh.verify(g.body, {
        'webhook-id': String(g.headers['webhook-id']),
        'webhook-timestamp': String(g.headers['webhook-timestamp']),
        'webhook-signature': String(g.headers['webhook-signature']),
      }) as { id: string; type: string };
      expect(verified.id).toBe(g.headers['webhook-id']);
      return verified.type;
    });
    expect(types).toEqual(['Ticket.created', 'Ticket.closed']);
    expect(r.got.some((g) => g.body.includes('not ann'))).toBe(false);
  });

  it('retries a failing delivery under the same webhook-id, and logs every attempt', async () => {
    r.got.length = 0;
    r.answers.push(500, 429);
    const t = await call(s.url, 'POST', '/tickets', { json: { title: 'retry me' }, headers: ann });
    await until(() => r.got.length >= 3);
    const ids = new Set(r.got.slice(0, 3).map((g) => g.headers['webhook-id']));
    expect(ids.size).toBe(1);
    // The third answer is recorded once the worker has read it: wait for that, not for a while.
    let delivery: { state: string; log: Array<{ status: number }> } | undefined;
    await waitFor(
      async () => {
        const log = await call(s.url, 'GET', `/webhook-endpoints/${endpoint.id}/deliveries`, { headers: ann });
        delivery = log.body.data.find((d: { eventId: string }) => d.eventId === r.got[0]?.headers['webhook-id']);
        return delivery?.state === 'delivered';
      },
      () => `the delivery to be recorded as delivered: ${JSON.stringify(delivery)}`,
    );
    if (!delivery) throw new Error('no delivery');
    expect(delivery.log.map((a: { status: number }) => a.status)).toEqual([500, 429, 200]);
    expect(t.status).toBe(201);
  });

  it('a 410 disables the endpoint, and its owner sees why; re-enabling works', async () => {
    r.answers.push(410);
    await call(s.url, 'POST', '/tickets', { json: { title: 'gone' }, headers: ann });
    await until(() => r.got.some((g) => g.body.includes('"gone"')));
    // The 410 is recorded once the receiver's answer is read: wait for that, not for a while.
    let ep = await call(s.url, 'GET', `/webhook-endpoints/${endpoint.id}`, { headers: ann });
    await waitFor(
      async () => {
        ep = await call(s.url, 'GET', `/webhook-endpoints/${endpoint.id}`, { headers: ann });
        return ep.body.disabled === true;
      },
      () => `the endpoint to be disabled: ${ep.text}`,
    );
    expect(ep.body.disabledReason).toContain('410');
    const back = await call(s.url, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
      json: { disabled: false },
      headers: ann,
    });
    expect(back.body.disabled).toBe(false);
  });

  it('after a rotation, deliveries carry both signatures for a day', async () => {
    const rotated = await call(s.url, 'POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`, { headers: ann });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    r.got.length = 0;
    await call(s.url, 'POST', '/tickets', { json: { title: 'rotated' }, headers: ann });
    await until(() => r.got.length >= 1);
    const g = r.got[0] as Received;
    expect(String(g.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const headers = {
      'webhook-id': String(g.headers['webhook-id']),
      'webhook-timestamp': String(g.headers['webhook-timestamp']),
      'webhook-signature': String(g.headers['webhook-signature']),
    };
    expect(() => new Webhook(rotated.body.secret).verify(g.body, headers)).not.toThrow();
    expect(() => new Webhook(endpoint.secret).verify(g.body, headers)).not.toThrow();
  });

  it('refuses receivers on loopback, private or metadata addresses unless the spec allows them', async () => {
    const strict = await servePlan(planOf(SPEC(false)));
    const key = { 'x-api-key': (await issueApiKey(strict.store, { subject: 'ann', roles: ['agent'] })).key };
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://169.254.169.254/latest',
      'http://10.0.0.1/',
      'http://[::1]/',
      'ftp://x.example/',
    ]) {
      const made = await call(strict.url, 'POST', '/webhook-endpoints', { json: { url }, headers: key });
      expect(made.status, url).toBe(422);
      expect(made.body.errors[0].pointer).toBe('#/url');
    }
    await strict.close({ remove: true });
  });
});
