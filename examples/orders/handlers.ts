/**
 * Custom endpoint handlers of the order desk, named by `endpoints.custom[].handler` in service.yaml.
 *
 * `HandlerContext` is the slice of the runtime's handler context these handlers use (see CustomContext in
 * src/parts/endpoints/custom-runtime.ts); it is declared here so the example stands on its own.
 */

type StoredRecord = { readonly id: string } & Readonly<Record<string, unknown>>;

interface ListQuery {
  readonly filters: ReadonlyArray<{ readonly field: string; readonly op: 'eq' | 'in'; readonly value: unknown }>;
  readonly sort: ReadonlyArray<{ readonly field: string; readonly desc: boolean }>;
  readonly limit: number;
  readonly count: boolean;
}

export interface HandlerContext {
  readonly params: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  readonly store: {
    get(resource: string, id: string): Promise<StoredRecord | undefined>;
    list(
      resource: string,
      query: ListQuery,
    ): Promise<{ readonly rows: readonly StoredRecord[]; readonly total?: number }>;
  };
  /** Ends the request with a catalogued error (built-in or from `errors.catalogue`). */
  fail(code: string, detail?: string): never;
  /** Writes a declared event (`events.declared`), in this request's transaction. */
  emit(event: string, payload: Readonly<Record<string, unknown>>): Promise<void>;
}

const OPEN_STATES = ['cart', 'placed', 'paid', 'shipped'];
const REFUNDABLE_STATES = new Set(['paid', 'shipped', 'delivered']);

/** How many orders of one customer match, counted by the store rather than read page by page. */
const countOrders = async (ctx: HandlerContext, customer: string, states?: readonly string[]): Promise<number> => {
  const { total } = await ctx.store.list('Order', {
    filters: [
      { field: 'customer', op: 'eq', value: customer },
      ...(states ? [{ field: 'status', op: 'in' as const, value: states }] : []),
    ],
    sort: [],
    limit: 1,
    count: true,
  });
  return total ?? 0;
};

/** GET /customers/{id}/summary — how many orders a customer has, and how many are still open. */
export const customerSummary = async (ctx: HandlerContext) => {
  const id = String(ctx.params.id ?? '');
  const customer = await ctx.store.get('Customer', id);
  if (!customer) ctx.fail('not_found', `No customer ${id}.`);
  const [orders, open] = await Promise.all([countOrders(ctx, customer.id), countOrders(ctx, customer.id, OPEN_STATES)]);
  return { customer: customer.id, orders, open };
};

/** POST /orders/{id}/refund-request — records a customer's refund request as an event for staff to act on. */
export const requestRefund = async (ctx: HandlerContext) => {
  const id = String(ctx.params.id ?? '');
  const order = await ctx.store.get('Order', id);
  if (!order) ctx.fail('not_found', `No order ${id}.`);
  const customer = await ctx.store.get('Customer', String(order.customer));
  if (customer?.blocked === true) ctx.fail('customer_blocked');
  if (!REFUNDABLE_STATES.has(String(order.status))) {
    ctx.fail('invalid_transition', `An order that is ${String(order.status)} cannot be refunded.`);
  }
  const body = (ctx.body ?? {}) as { reason?: unknown };
  const reason = typeof body.reason === 'string' ? body.reason : undefined;
  await ctx.emit('Order.refundRequested', { order: order.id, ...(reason ? { reason } : {}) });
  return { order: order.id, status: 'refund-requested' };
};
