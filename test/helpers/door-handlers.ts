import type { CustomContext } from '../../src/index.ts';

// Handlers of test/access-door.test.ts: each exercises one side of ctx.records.

type Context = CustomContext<'Address' | 'Memo' | 'Ticket'>;
type Body = Record<string, unknown>;

export const createAddress = async (ctx: Context) => ctx.records.Address.create(ctx.body as Body);
export const updateAddress = async (ctx: Context) =>
  ctx.records.Address.update(String(ctx.params.id), ctx.body as Body);
export const removeAddress = async (ctx: Context) => {
  await ctx.records.Address.delete(String(ctx.params.id));
};

/** The caller's memos, three at a time, by title. */
export const memoTitles = async (ctx: Context) => {
  const page = await ctx.records.Memo.list({ sort: [{ field: 'title' }], limit: 3, count: true });
  return { titles: page.rows.map((m) => m.title), total: page.total, secrets: page.rows.some((m) => 'secret' in m) };
};
export const memosBySecret = async (ctx: Context) => {
  const page = await ctx.records.Memo.list({ filters: [{ field: 'secret', value: 'x' }] });
  return { titles: page.rows.map((m) => m.title), total: page.total };
};

/** A GET handler that writes: its write gets a transaction of its own. */
export const touchTicket = async (ctx: Context) => ctx.records.Ticket.create({ title: 'touched' });
export const removeTicket = async (ctx: Context) => {
  await ctx.records.Ticket.delete(String(ctx.params.id));
};
/** Writes, then fails: the write rolls back with the request. */
export const createThenFail = async (ctx: Context) => {
  await ctx.records.Ticket.create({ title: 'doomed' });
  ctx.fail('conflict', 'changed my mind');
};
