import type { ResourcePlan } from '../../plan/types.ts';
import { ApiError } from '../errors/api-error.ts';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The references a request asks to expand, in spec names: `expand=author,tags` or Stripe's repeated
 * `expand[]=customer` (on a list also `expand[]=data.customer`, the list's items member first). Each must be one
 * the resource lets expand, at most once; anything else is 400 invalid_expand.
 */
export const parseExpand = (resource: ResourcePlan, query: Query, list: boolean): string[] => {
  const plain = query.expand;
  const bracketed = query['expand[]'];
  if (plain === undefined && bracketed === undefined) return [];
  if (plain !== undefined && bracketed !== undefined)
    throw new ApiError('invalid_expand', 'Give expand or expand[], not both.');
  if (Array.isArray(plain)) throw new ApiError('invalid_query', 'expand is given more than once.');
  const asked =
    plain !== undefined
      ? plain.split(',').map((item) => item.trim())
      : Array.isArray(bracketed)
        ? bracketed
        : [bracketed];
  if (asked.length > 16) throw new ApiError('invalid_expand', 'At most 16 references can be expanded.');
  const { names } = resource.wire;
  const items = resource.wire.list.items;
  const prefix = list && items ? `${items}.` : undefined;
  const out: string[] = [];
  for (const raw of asked) {
    const text = String(raw ?? '');
    if (text === '') throw new ApiError('invalid_expand', 'expand has an empty item.');
    const named = prefix && text.startsWith(prefix) ? text.slice(prefix.length) : text;
    const engine = names.in.get(named)?.name ?? (names.out.has(named) ? '\u0000' : named);
    if (!resource.list.expand.includes(engine))
      throw new ApiError('invalid_expand', `Cannot expand "${text.slice(0, 64)}".`);
    if (out.includes(engine)) throw new ApiError('invalid_expand', `"${text.slice(0, 64)}" is expanded twice.`);
    out.push(engine);
  }
  return out;
};
