import { defineService } from '../../src/index.ts';

/**
 * A small order desk written in TypeScript: the same spec language as service.yaml, checked by the
 * compiler as you type. `ninefold check examples/orders-ts/service.ts` loads it like a YAML spec.
 */
export default defineService({
  ninefold: 1,
  service: {
    name: 'orders-ts',
    title: 'Order desk (TypeScript)',
    purpose: 'Takes orders for products and moves them from cart to shipped.',
  },
  resources: {
    Product: {
      idPrefix: 'prd',
      fields: {
        sku: { type: 'string', pattern: '^[A-Z0-9-]{3,32}$', required: true, unique: true },
        name: { type: 'string', minLength: 1, maxLength: 200, required: true },
        price: { type: 'decimal', scale: 2, min: 0, required: true },
        stock: { type: 'integer', min: 0, default: 0 },
      },
    },
    Order: {
      idPrefix: 'ord',
      fields: {
        email: { type: 'string', format: 'email', required: true },
        lines: {
          type: 'array',
          maxItems: 100,
          items: {
            type: 'object',
            fields: {
              product: { type: 'ref', to: 'Product', required: true },
              qty: { type: 'integer', min: 1, required: true },
            },
          },
        },
        total: { type: 'decimal', scale: 2, readOnly: true },
      },
      states: {
        field: 'status',
        initial: 'cart',
        final: ['shipped', 'cancelled'],
        transitions: {
          place: { from: 'cart', to: 'placed', when: 'size(record.lines) > 0' },
          ship: { from: 'placed', to: 'shipped', input: { carrier: { type: 'string', required: true } } },
          cancel: { from: ['cart', 'placed'], to: 'cancelled' },
          expire: { from: 'placed', to: 'cancelled', after: 'PT24H' },
        },
      },
    },
  },
  endpoints: {
    Product: { operations: ['list', 'get', 'create', 'update'], list: { filter: ['sku'], sort: ['name', 'price'] } },
    Order: { operations: ['list', 'get', 'create', 'update'], list: { filter: ['email'], sort: ['createdAt'] } },
  },
  events: { auto: true },
  errors: { catalogue: { out_of_stock: { status: 409, title: 'An item is out of stock' } } },
  limits: { rate: { default: '100/min', by: 'ip' }, size: { body: '1mb', pageSize: 100 } },
});
