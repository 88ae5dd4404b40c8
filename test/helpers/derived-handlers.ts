import type { CustomContext } from '../../src/index.ts';

// Handlers of test/shapes-derived.test.ts: writes and filters through ctx.records meet the same normalisers and
// derived fields as the generated endpoints.

type Context = CustomContext<'Article' | 'Member'>;

export const createArticle = async (ctx: Context) => ctx.records.Article.create(ctx.body as Record<string, unknown>);
export const memberByEmail = async (ctx: Context) => {
  const page = await ctx.records.Member.list({ filters: [{ field: 'email', value: String(ctx.query.email) }] });
  return { emails: page.rows.map((m) => m.email) };
};
