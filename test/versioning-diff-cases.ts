/**
 * Planted edits of test/fixtures/diff/base.yaml for `ninefold diff`: each replaces text of the base, and names the
 * rule the change must be classed by and where it must be located: the line holding `line`, at the column of `col`
 * (in the edited spec, or in the base for what is gone).
 */
export interface DiffCase {
  readonly name: string;
  readonly edits: ReadonlyArray<readonly [from: string, to: string]>;
  readonly rule: string;
  readonly breaking: boolean;
  readonly side: 'old' | 'new';
  readonly line: string;
  readonly col: string;
  /** The new version whose changes cover the breaking change. */
  readonly coveredBy?: string;
}

const PHONE = '      phone: { type: string }\n';
const VERSIONS = '    - id: "2026-01-15"\n';
const version = (changes: string) => `${VERSIONS}    - id: "2026-09-01"\n      changes: [${changes}]\n`;

const breaking = (
  name: string,
  edits: DiffCase['edits'],
  rule: string,
  line: string,
  col: string,
  side: 'old' | 'new' = 'new',
): DiffCase => ({ name, edits, rule, breaking: true, side, line, col });
const safe = (name: string, edits: DiffCase['edits'], rule: string, line: string, col: string): DiffCase => ({
  name,
  edits,
  rule,
  breaking: false,
  side: 'new',
  line,
  col,
});

export const BREAKING: readonly DiffCase[] = [
  breaking(
    'a field removed',
    [['      nickname: { type: string, maxLength: 40 }\n', '']],
    'field-removed',
    'nickname:',
    'nickname',
    'old',
  ),
  breaking(
    'maxLength lowered',
    [['maxLength: 40 }', 'maxLength: 20 }']],
    'constraint-tightened',
    'nickname:',
    'maxLength',
  ),
  breaking(
    'a new pattern',
    [[PHONE, '      phone: { type: string, pattern: "^[0-9 ]+$" }\n']],
    'constraint-tightened',
    'phone:',
    'pattern',
  ),
  breaking(
    'an enum value removed',
    [['[free, pro, enterprise]', '[free, pro]']],
    'enum-value-removed',
    'tier:',
    'values',
  ),
  breaking(
    'a new required input',
    [[PHONE, `${PHONE}      vat: { type: string, required: true }\n`]],
    'required-field-added',
    'vat:',
    'vat',
  ),
  breaking(
    'a field made required',
    [['maxLength: 254 }', 'maxLength: 254, required: true }']],
    'field-made-required',
    'email:',
    'required',
  ),
  breaking('a type changed', [['age: { type: integer', 'age: { type: number']], 'type-changed', 'age:', 'type'),
  breaking('min raised', [['min: 0, max: 150', 'min: 18, max: 150']], 'constraint-tightened', 'age:', 'min'),
  breaking(
    'minLength raised',
    [['minLength: 1, maxLength: 120', 'minLength: 3, maxLength: 120']],
    'constraint-tightened',
    'name: {',
    'minLength',
  ),
  breaking('an error status changed', [['status: 409', 'status: 422']], 'status-changed', 'out_of_stock:', 'status'),
  breaking(
    'an operation removed',
    [
      [
        'operations: [list, get, create, update, delete]\n    path: /customers',
        'operations: [list, get, create, update]\n    path: /customers',
      ],
    ],
    'operation-removed',
    'operations: [list, get, create, update]',
    'operations',
  ),
  breaking(
    'a transition removed',
    [['        refund: { from: paid, to: cancelled, roles: [admin] }\n', '']],
    'transition-removed',
    'refund:',
    'refund',
    'old',
  ),
  breaking(
    'a transition from fewer states',
    [['from: [cart, placed]', 'from: [cart]']],
    'transition-changed',
    'cancel:',
    'from',
  ),
  breaking(
    'a transition for fewer roles',
    [['roles: [admin, billing]', 'roles: [admin]']],
    'roles-narrowed',
    'pay:',
    'roles',
  ),
  breaking(
    'an event removed',
    [['    Order.refundRequested:', '    Order.refundAsked:']],
    'event-removed',
    'Order.refundRequested:',
    'Order.refundRequested',
    'old',
  ),
  breaking(
    'a payload field removed',
    [['        reason: { type: string, maxLength: 500 }\n', '']],
    'field-removed',
    'reason:',
    'reason',
    'old',
  ),
  breaking(
    'an auth scheme changed',
    [['name: X-Api-Key', 'name: X-Key']],
    'auth-changed',
    'key: { type: apiKey',
    'key',
  ),
  breaking(
    'an access rule changed',
    [['Customer: { read: "true"', `Customer: { read: "'admin' in principal.roles"`]],
    'auth-rule-changed',
    'Customer: { read',
    'read',
  ),
  breaking(
    'a resource removed',
    [['  Tag:\n    fields:\n      label: { type: string, maxLength: 40 }\n', '']],
    'resource-removed',
    'Tag:',
    'Tag',
    'old',
  ),
  breaking(
    'a list filter removed',
    [['filter: [email, tier, name]', 'filter: [email, tier]']],
    'list-option-removed',
    'filter: [email, tier]',
    'filter',
  ),
  breaking('a rate limit lowered', [['100/min', '50/min']], 'limit-lowered', 'rate:', 'default'),
  breaking('a body size lowered', [['body: 1mb', 'body: 512kb']], 'limit-lowered', 'body:', 'body'),
  breaking('a path changed', [['path: /customers', 'path: /clients']], 'path-changed', 'path: /clients', 'path'),
  breaking(
    'the versioning scheme changed',
    [['scheme: header', 'scheme: query']],
    'versioning-changed',
    'scheme: query',
    'scheme',
  ),
  breaking(
    'a field made read-only',
    [['note: { type: string, maxLength: 1000 }', 'note: { type: string, maxLength: 1000, readOnly: true }']],
    'field-made-read-only',
    'note:',
    'readOnly',
  ),
  breaking('a default changed', [['default: free', 'default: pro']], 'default-changed', 'tier:', 'default'),
  breaking(
    'a guard added',
    [['place: { from: cart, to: placed }', 'place: { from: cart, to: placed, when: "size(record.note) > 0" }']],
    'guard-changed',
    'place:',
    'when',
  ),
  breaking('automatic events turned off', [['auto: true', 'auto: false']], 'event-removed', 'auto:', 'auto'),
  breaking(
    'a role removed',
    [
      ['    support: Staff who help customers.\n', ''],
      ['readableBy: [admin, support]', 'readableBy: [admin]'],
    ],
    'roles-narrowed',
    'support:',
    'support',
    'old',
  ),
];

export const SAFE: readonly DiffCase[] = [
  safe(
    'an optional field added',
    [[PHONE, `${PHONE}      website: { type: string, format: uri }\n`]],
    'field-added',
    'website:',
    'website',
  ),
  safe('maxLength raised', [['maxLength: 40 }', 'maxLength: 80 }']], 'field-loosened', 'nickname:', 'maxLength'),
  safe(
    'an enum value added',
    [['[free, pro, enterprise]', '[free, pro, enterprise, vip]']],
    'enum-value-added',
    'tier:',
    'values',
  ),
  safe(
    'a resource added',
    [['  Tag:\n', '  Coupon:\n    fields:\n      code: { type: string }\n  Tag:\n']],
    'resource-added',
    'Coupon:',
    'Coupon',
  ),
  safe(
    'an event type added',
    [['errors:\n', '    Order.flagged:\n      payload: { order: { type: string } }\nerrors:\n']],
    'event-added',
    'Order.flagged:',
    'Order.flagged',
  ),
  safe(
    'the purpose reworded',
    [['Sells things to customers.', 'Sells things to customers, fast.']],
    'docs-changed',
    'purpose:',
    'purpose',
  ),
  safe('a longer id prefix', [['idPrefix: cus', 'idPrefix: cust']], 'id-changed', 'idPrefix: cust', 'idPrefix'),
  safe(
    'a list filter added',
    [['filter: [status, customer]', 'filter: [status, customer, note]']],
    'list-option-added',
    'filter: [status, customer, note]',
    'filter',
  ),
  safe('a rate limit raised', [['100/min', '200/min']], 'limit-raised', 'rate:', 'default'),
  safe('a version added', [[VERSIONS, version('')]], 'version-added', 'id: "2026-09-01"', 'id'),
  safe(
    'a transition for more roles',
    [['roles: [admin, billing]', 'roles: [admin, billing, support]']],
    'roles-widened',
    'pay:',
    'roles',
  ),
  safe(
    'an error code added',
    [['errors:\n  catalogue:\n', 'errors:\n  catalogue:\n    gone_away: { status: 410, title: Gone }\n']],
    'error-added',
    'gone_away:',
    'gone_away',
  ),
  safe(
    'a role added',
    [['roles:\n    admin:', 'roles:\n    auditor: Reads the books.\n    admin:']],
    'auth-added',
    'auditor:',
    'auditor',
  ),
  safe(
    'a payload field added',
    [
      [
        '        reason: { type: string, maxLength: 500 }\n',
        '        reason: { type: string, maxLength: 500 }\n        amount: { type: integer, required: true }\n',
      ],
    ],
    'field-added',
    'amount:',
    'amount',
  ),
];

/** Breaking changes a new version declares: exit 0, each change named with the version that covers it. */
export const COVERED: readonly DiffCase[] = [
  {
    ...breaking(
      'a rename',
      [
        ['      name: { type: string, minLength: 1', '      fullName: { type: string, minLength: 1'],
        ['[email, tier, name]', '[email, tier, fullName]'],
        ['[createdAt, name]', '[createdAt, fullName]'],
        [VERSIONS, version('{ resource: Customer, rename: { from: name, to: fullName } }')],
      ],
      'field-renamed',
      'fullName:',
      'fullName',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'a removal',
      [
        ['      nickname: { type: string, maxLength: 40 }\n', ''],
        [VERSIONS, version('{ resource: Customer, remove: nickname }')],
      ],
      'field-removed',
      'nickname:',
      'nickname',
      'old',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'a retype',
      [
        ['age: { type: integer, min: 0, max: 150 }', 'age: { type: string }'],
        [VERSIONS, version('{ resource: Customer, retype: { field: age, from: { type: integer } } }')],
      ],
      'type-changed',
      'age:',
      'type',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'a required field added',
      [
        [PHONE, `${PHONE}      vat: { type: string, required: true }\n`],
        [VERSIONS, version('{ resource: Customer, add: vat }')],
      ],
      'required-field-added',
      'vat:',
      'vat',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'a field made required',
      [
        [PHONE, '      phone: { type: string, required: true }\n'],
        [VERSIONS, version('{ resource: Customer, require: phone, default: "" }')],
      ],
      'field-made-required',
      'phone:',
      'required',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'a field moved into an object',
      [
        [
          '      nickname: { type: string, maxLength: 40 }\n',
          '      alias: { type: object, fields: { nickname: { type: string, maxLength: 40 } } }\n',
        ],
        [VERSIONS, version('{ resource: Customer, move: { from: nickname, to: alias.nickname } }')],
      ],
      'field-removed',
      'nickname:',
      'nickname',
      'old',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'an error status changed',
      [
        ['out_of_stock: { status: 409', 'out_of_stock: { status: 422'],
        [VERSIONS, version('{ error: { code: out_of_stock, was: { status: 409 } } }')],
      ],
      'status-changed',
      'out_of_stock:',
      'status',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'an operation removed from a version on',
      [[VERSIONS, version('{ remove-operation: Customer.delete }')]],
      'operation-removed',
      'remove-operation',
      'remove-operation',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'a transition removed from a version on',
      [[VERSIONS, version('{ resource: Order, remove-transition: refund }')]],
      'transition-removed',
      'remove-transition',
      'remove-transition',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'an event removed from a version on',
      [[VERSIONS, version('{ remove-event: Order.refundRequested }')]],
      'event-removed',
      'remove-event',
      'remove-event',
    ),
    coveredBy: '2026-09-01',
  },
  {
    ...breaking(
      'a break only a transform can describe',
      [
        ['name: { type: string, minLength: 1, maxLength: 120', 'name: { type: string, minLength: 1, maxLength: 60'],
        [VERSIONS, version('{ resource: Customer, transform: ./shorten.ts, covers: [constraint-tightened] }')],
      ],
      'constraint-tightened',
      'name: { type: string, minLength: 1',
      'maxLength',
    ),
    coveredBy: '2026-09-01',
  },
];
