import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { createReplayGuard, verifyWebhook, WebhookVerificationError } from '../src/index.ts';
import { newWebhookSecret, signature } from '../src/parts/events/signing.ts';

// W10: the verifier a receiver uses (exported from the public door), with an injected clock.
const T0 = new Date('2026-11-20T12:00:00Z');
const at = (offsetSec: number) => () => new Date(T0.getTime() + offsetSec * 1000);
const body = '{"id":"evt_1","type":"Order.paid","time":"2026-11-20T12:00:00.000Z","data":{}}';
const headersFor = (secret: string, id = 'evt_1', timestamp = Math.floor(T0.getTime() / 1000), text = body) => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature(secret, id, timestamp, text),
});
const reason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  return 'accepted';
};

describe('verifyWebhook', () => {
  const secret = newWebhookSecret();

  it('accepts what Ninefold signs, and what the standardwebhooks package signs', () => {
    expect(verifyWebhook(secret, headersFor(secret), body, { now: at(0) })).toEqual(JSON.parse(body));
    // The raw bytes as received, and header names in any case.
    const h = headersFor(secret);
    const capitalised = {
      'Webhook-Id': h['webhook-id'],
      'Webhook-Timestamp': h['webhook-timestamp'],
      'Webhook-Signature': h['webhook-signature'],
    };
    expect(verifyWebhook(secret, capitalised, Buffer.from(body), { now: at(0) })).toEqual(JSON.parse(body));
    const theirs = new Webhook(secret).sign('msg_2', T0, body);
    const headers = {
      'webhook-id': 'msg_2',
      'webhook-timestamp': String(T0.getTime() / 1000),
      'webhook-signature': theirs,
    };
    expect(reason(() => verifyWebhook(secret, headers, body, { now: at(0) }))).toBe('accepted');
  });

  it('what it accepts, the standardwebhooks package accepts too', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(new Webhook(secret).verify(body, headersFor(secret, 'evt_1', now))).toEqual(JSON.parse(body));
  });

  it('refuses a timestamp more than 5 minutes old or ahead', () => {
    expect(reason(() => verifyWebhook(secret, headersFor(secret), body, { now: at(301) }))).toBe('stale_timestamp');
    expect(reason(() => verifyWebhook(secret, headersFor(secret), body, { now: at(-301) }))).toBe('stale_timestamp');
    expect(reason(() => verifyWebhook(secret, headersFor(secret), body, { now: at(299) }))).toBe('accepted');
  });

  it('refuses a tampered body, another secret, a wrong version and missing headers', () => {
    expect(
      reason(() => verifyWebhook(secret, headersFor(secret), body.replace('paid', 'shipped'), { now: at(0) })),
    ).toBe('bad_signature');
    expect(reason(() => verifyWebhook(newWebhookSecret(), headersFor(secret), body, { now: at(0) }))).toBe(
      'bad_signature',
    );
    const v2 = {
      ...headersFor(secret),
      'webhook-signature': headersFor(secret)['webhook-signature'].replace('v1,', 'v2,'),
    };
    expect(reason(() => verifyWebhook(secret, v2, body, { now: at(0) }))).toBe('bad_signature');
    const { 'webhook-id': _, ...noId } = headersFor(secret);
    expect(reason(() => verifyWebhook(secret, noId, body, { now: at(0) }))).toBe('missing_headers');
  });

  it('a signed body that is not JSON is refused as invalid_body, not with a parser error', () => {
    const text = 'not json';
    expect(
      reason(() =>
        verifyWebhook(secret, headersFor(secret, 'evt_1', Math.floor(T0.getTime() / 1000), text), text, { now: at(0) }),
      ),
    ).toBe('invalid_body');
  });

  it('during a rotation either of the two signatures verifies', () => {
    const older = newWebhookSecret();
    const h = headersFor(secret);
    const both = {
      ...h,
      'webhook-signature': `${signature(older, 'evt_1', Number(h['webhook-timestamp']), body)} ${h['webhook-signature']}`,
    };
    expect(reason(() => verifyWebhook(secret, both, body, { now: at(0) }))).toBe('accepted');
    expect(reason(() => verifyWebhook(older, both, body, { now: at(0) }))).toBe('accepted');
  });

  it('refuses a captured delivery sent again; lets a retry (same id, fresh timestamp) through', () => {
    let clock = at(0);
    const seen = createReplayGuard(600, () => clock());
    const first = headersFor(secret);
    expect(reason(() => verifyWebhook(secret, first, body, { now: clock, seen }))).toBe('accepted');
    clock = at(60);
    expect(reason(() => verifyWebhook(secret, first, body, { now: clock, seen }))).toBe('replayed');
    const retry = headersFor(secret, 'evt_1', Math.floor(T0.getTime() / 1000) + 30);
    expect(reason(() => verifyWebhook(secret, retry, body, { now: clock, seen }))).toBe('accepted');
    // After the tolerance the timestamp itself refuses it, and the guard has forgotten it.
    clock = at(700);
    expect(reason(() => verifyWebhook(secret, first, body, { now: clock, seen }))).toBe('stale_timestamp');
  });
});
