import type { ServiceSpec } from '../../spec/schema.ts';
import { declaredRoutes, routeKey } from '../endpoints/routes.ts';

/** What an `add-operation` / `remove-operation` names, found among the spec's routes. */
export type NamedOperation =
  | { readonly kind: 'operation' | 'transition'; readonly resource: string; readonly name: string }
  | { readonly kind: 'custom'; readonly name: string };

/**
 * Resolves `Customer.delete`, `Order.ship` or `POST /customers/{id}/archive` (parameter names aside) to the
 * operation, transition or custom endpoint the spec declares; undefined when it declares none such.
 */
export const findOperation = (spec: ServiceSpec, named: string): NamedOperation | undefined => {
  const space = named.indexOf(' ');
  const key = space > 0 ? routeKey(named.slice(0, space), named.slice(space + 1).trim()) : undefined;
  for (const route of declaredRoutes(spec)) {
    const what = route.what;
    const match = key ? routeKey(route.method, route.path) === key : what.replace(/^transition /, '') === named;
    if (!match) continue;
    if (what.startsWith('custom endpoint ')) return { kind: 'custom', name: what.slice('custom endpoint '.length) };
    const transition = what.startsWith('transition ');
    const [resource = '', name = ''] = what.replace(/^transition /, '').split('.');
    if (what.split('.').length > 2) return undefined;
    return { kind: transition ? 'transition' : 'operation', resource, name };
  }
  if (!key) {
    // A custom endpoint by its name.
    const custom = (spec.endpoints?.custom ?? []).find((c) => c.name === named);
    if (custom) return { kind: 'custom', name: named };
  }
  return undefined;
};

/** The name routes carry for it (`Customer.delete`, `Order.ship`, `customerSummary`): what the runtime compares. */
export const operationKey = (op: NamedOperation): string =>
  op.kind === 'custom' ? op.name : `${op.resource}.${op.name}`;
