/**
 * Custom endpoint handlers of the order desk, named by `endpoints.custom[].handler` in service.yaml.
 *
 * A handler reaches records only through `ctx.records`, as its caller: a record the caller may not read is
 * `undefined`, exactly like a missing one, so the handler answers 404 for both.
 */
import type { CustomContext } from '../../src/index.ts';

type Context = CustomContext<'Customer' | 'Product' | 'Order'>;

const OPEN_STATES = ['cart', 'placed', 'paid', 'shipped'];
const REFUNDABLE_STATES = new Set(['paid', 'shipped', 'delivered']);

/** How many orders of one customer match, counted by the store rather than read page by page. */
const countOrders = async (ctx: Context, customer: string, states?: readonly string[]): Promise<number> => {
  const { total } = await ctx.records.Order.list({
    filters: [
      { field: 'customer', value: customer },
      ...(states ? [{ field: 'status', op: 'in' as const, value: states }] : []),
    ],
    limit: 1,
    count: true,
  });
  return total ?? 0;
};

/** GET /customers/{id}/summary — how many orders a customer has, and how many are still open. */
export const customerSummary = async (ctx: Context) => {
  const id = String(ctx.params.id ?? '');
  const customer = await ctx.records.Customer.get(id);
  if (!customer) ctx.fail('not_found', `No customer ${id}.`);
  const [orders, open] = await Promise.all([countOrders(ctx, customer.id), countOrders(ctx, customer.id, OPEN_STATES)]);
  return { customer: customer.id, orders, open };
};

/** POST /orders/{id}/refund-request — records a customer's refund request as an event for staff to act on. */
export const requestRefund = async (ctx: Context) => {
  const id = String(ctx.params.id ?? '');
  const order = await ctx.records.Order.get(id);
  if (!order) ctx.fail('not_found', `No order ${id}.`);
  // The customer is readable by themself and by admin and support staff, so the check holds for them.
  const customer = await ctx.records.Customer.get(String(order.customer));
  if (customer?.blocked === true) ctx.fail('customer_blocked');
  if (!REFUNDABLE_STATES.has(String(order.status))) {
    ctx.fail('invalid_transition', `An order that is ${String(order.status)} cannot be refunded.`);
  }
  const body = (ctx.body ?? {}) as { reason?: unknown };
  const reason = typeof body.reason === 'string' ? body.reason : undefined;
  await ctx.emit('Order.refundRequested', { order: order.id, ...(reason ? { reason } : {}) });
  return { order: order.id, status: 'refund-requested' };
};
