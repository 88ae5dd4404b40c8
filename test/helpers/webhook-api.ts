import { Webhook } from 'standardwebhooks';
import { call } from './serve-spec.ts';
import { waitFor } from './wait-for.ts';
import type { Hit } from './webhook-receiver.ts';

export interface Endpoint {
  readonly id: string;
  readonly secret: string;
  readonly url: string;
}

export interface Attempt {
  readonly at: string;
  readonly durationMs: number;
  readonly status?: number;
  readonly error?: string;
}

export interface DeliveryView {
  readonly id: number;
  readonly endpointId: string;
  readonly eventId: string;
  readonly state: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly nextAt?: string;
  readonly log: Attempt[];
}

/** Registers a webhook endpoint; anything but 201 fails the test with the answer. */
export const registerEndpoint = async (
  base: string,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<Endpoint> => {
  const made = await call(base, 'POST', '/webhook-endpoints', { json: body, headers });
  if (made.status !== 201) throw new Error(`POST /webhook-endpoints answered ${made.status}: ${made.text}`);
  return made.body as Endpoint;
};

/** The endpoint's deliveries as its owner sees them, oldest first. */
export const deliveriesOf = async (
  base: string,
  endpointId: string,
  headers: Record<string, string>,
): Promise<DeliveryView[]> => {
  const got = await call(base, 'GET', `/webhook-endpoints/${endpointId}/deliveries`, { headers });
  if (got.status !== 200) throw new Error(`GET deliveries answered ${got.status}: ${got.text}`);
  return (got.body.data as DeliveryView[]).slice().reverse();
};

/** Waits until the endpoint's deliveries satisfy `check`, then returns them; reports what it last saw. */
export const settleDeliveries = async (
  base: string,
  endpointId: string,
  headers: Record<string, string>,
  check: (ds: DeliveryView[]) => boolean,
): Promise<DeliveryView[]> => {
  let last: DeliveryView[] = [];
  await waitFor(
    async () => {
      last = await deliveriesOf(base, endpointId, headers);
      return check(last);
    },
    () => `deliveries to settle; last seen:\n${JSON.stringify(last, null, 1)}`,
  );
  return last;
};

/** An attempt as one word: its status, or why there was none. */
export const outcome = (a: Attempt): number | string | undefined => a.status ?? a.error;

/** The Standard Webhooks headers of a hit (the signature header as given, or with one signature only). */
export const signedHeaders = (hit: Hit, signature = String(hit.headers['webhook-signature'])) => ({
  'webhook-id': String(hit.headers['webhook-id']),
  'webhook-timestamp': String(hit.headers['webhook-timestamp']),
  'webhook-signature': signature,
});

/** Verifies a hit with the standardwebhooks package; throws when the signature does not hold. */
export const verifyHit = (secret: string, hit: Hit, signature?: string) =>
  new Webhook(secret).verify(hit.body, signedHeaders(hit, signature)) as {
    id: string;
    type: string;
    time: string;
    data: Record<string, unknown>;
  };
