import type { CustomContext } from '../../src/index.ts';

// Custom handlers of the auth desk (test/helpers/auth-fixture.ts): each reaches records through ctx.records only,
// so every rule the generated endpoints apply holds for them too.

type Context = CustomContext<'Customer' | 'Order' | 'Invoice'>;

const idOf = (ctx: Context) => String(ctx.params.id ?? '');

/** GET /orders/{id}/summary */
export const orderSummary = async (ctx: Context) => {
  const order = await ctx.records.Order.get(idOf(ctx));
  if (!order) return ctx.fail('not_found', `No order ${idOf(ctx)}.`);
  return { id: order.id, customer: order.customer, status: order.status, note: order.note };
};

/** POST /orders/{id}/annotate {note} */
export const annotateOrder = async (ctx: Context) => {
  const order = await ctx.records.Order.update(idOf(ctx), { note: (ctx.body as { note?: string }).note });
  return { id: order.id, note: order.note };
};

/** GET /order-count: the caller's orders, counted. */
export const orderCount = async (ctx: Context) => {
  const page = await ctx.records.Order.list({ count: true, limit: 1000 });
  return { total: page.total ?? 0, ids: page.rows.map((o) => o.id) };
};

/** POST /customers/{id}/profile: the body goes to the customer record as a PATCH. */
export const updateProfile = async (ctx: Context) => {
  const customer = await ctx.records.Customer.update(idOf(ctx), ctx.body as Record<string, unknown>);
  return { id: customer.id, fullName: customer.fullName };
};

/** POST /invoices/{id}/discard */
export const discardInvoice = async (ctx: Context) => {
  await ctx.records.Invoice.delete(idOf(ctx));
};

/** GET /handler-context: what a handler can reach. */
export const handlerContext = (ctx: Context) => ({
  keys: Object.keys(ctx).sort(),
  store: 'store' in ctx || Object.values(ctx).some((v) => typeof v === 'object' && v !== null && 'transaction' in v),
});
