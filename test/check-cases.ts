/**
 * One small spec per rule group, with every semantic diagnostic it must produce as code@line:col (shape
 * diagnostics are left out). Lines count from `ninefold: 1`, which is line 1.
 */
export interface CheckCase {
  readonly rule: string;
  readonly spec: string;
  readonly expected: readonly string[];
}

export const CHECK_CASES: readonly CheckCase[] = [
  {
    rule: 'purpose',
    spec: `ninefold: 1
resources:
  A:
    fields: { a: { type: string } }
`,
    expected: ['missing-service-name@2:1'],
  },
  {
    rule: 'reserved',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      id: { type: string }
      createdAt: { type: datetime }
      meta: { type: object, fields: { id: { type: string }, constructor: { type: string } } }
`,
    expected: ['reserved-field-name@6:7', 'reserved-field-name@7:7', 'reserved-field-name@8:61'],
  },
  {
    rule: 'constraints',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      n: { type: integer, minLength: 1 }
      s: { type: string, min: 1 }
      e: { type: string, items: { type: string } }
      v: { type: string, values: [a] }
      d: { type: number, scale: 2 }
      p: { type: boolean, pattern: "^x$" }
`,
    expected: [
      'constraint-type-mismatch@6:27',
      'constraint-type-mismatch@7:26',
      'constraint-type-mismatch@8:26',
      'constraint-type-mismatch@9:26',
      'constraint-type-mismatch@10:26',
      'format-type-mismatch@11:27',
    ],
  },
  {
    rule: 'detail',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      e: { type: enum }
      r: { type: ref }
      l: { type: array }
      p: { type: string, format: pattern }
`,
    expected: [
      'missing-type-detail@6:18',
      'missing-type-detail@7:18',
      'missing-type-detail@8:18',
      'missing-type-detail@9:34',
    ],
  },
  {
    rule: 'range',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      n: { type: integer, min: 5, max: 1 }
      s: { type: string, minLength: 9, maxLength: 2 }
      re: { type: string, pattern: "a(b" }
`,
    expected: ['invalid-range@6:32', 'invalid-range@7:37', 'invalid-pattern@8:36'],
  },
  {
    rule: 'defaults',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      a: { type: integer, default: "x" }
      b: { type: integer, max: 3, default: 4 }
      c: { type: string, maxLength: 2, default: abc }
      d: { type: string, format: email, default: nobody }
      e: { type: string, format: uuid, default: 123e4567-e89b-12d3-a456-426614174000 }
      f: { type: string, format: ipv4, default: 300.1.1.1 }
      g: { type: string, pattern: "[a-z]+", default: ABC }
      h: { type: enum, values: [x, y], default: x }
`,
    expected: [
      'invalid-default@6:36',
      'invalid-default@7:44',
      'invalid-default@8:49',
      'invalid-default@9:50',
      'invalid-default@11:49',
      'invalid-default@12:54',
    ],
  },
  {
    rule: 'flags',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      a: { type: string, readOnly: true, writeOnly: true }
      b: { type: string, required: true, readOnly: true }
      c: { type: string, required: true, readOnly: true, default: x }
`,
    expected: ['conflicting-flags@6:42', 'conflicting-flags@7:42'],
  },
  {
    rule: 'derived and normalisers',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      title: { type: string }
      secret: { type: string, writeOnly: true }
      n: { type: integer, normalize: [trim] }
      s: { type: string, normalize: [lower, sort] }
      tags: { type: array, items: { type: string }, normalize: [trim, dedupe, sort] }
      objs: { type: array, items: { type: object, fields: { k: { type: string, normalize: [upper] } } }, normalize: [sort] }
      slug: { type: string, unique: true, derive: { slug: title } }
      loose: { type: string, derive: { slug: title, onChange: keep } }
      num: { type: integer, unique: true, default: 1, derive: { slug: titel } }
      fromSecret: { type: string, unique: true, derive: { slug: secret } }
      fromSlug: { type: string, unique: true, derive: { slug: slug } }
      fromN: { type: string, unique: true, derive: { slug: n } }
      meta: { type: object, fields: { x: { type: string, derive: { slug: title } } } }
`,
    expected: [
      'invalid-normalize@8:39',
      'invalid-normalize@9:45',
      'invalid-normalize@11:118',
      'derived-not-unique@13:30',
      'invalid-derive@14:52',
      'invalid-derive@14:63',
      'unknown-field@14:71',
      'invalid-derive@15:65',
      'invalid-derive@16:63',
      'invalid-derive@17:60',
      'nested-field-flag@18:58',
    ],
  },
  {
    rule: 'nested',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      lines:
        type: array
        items:
          type: object
          fields:
            qty: { type: integer, minLength: 1 }
            tags: { type: array, items: { type: ref, to: Nope } }
`,
    expected: ['constraint-type-mismatch@11:35', 'unknown-resource@12:58'],
  },
  {
    rule: 'index',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      email: { type: string }
    indexes:
      - { fields: [email, createdAt, emial] }
`,
    expected: ['unknown-field@8:38'],
  },
  {
    rule: 'dupname',
    spec: `ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { a: { type: string } }
  ORDER:
    fields: { a: { type: string } }
  Person:
    plural: orders
    fields: { a: { type: string } }
`,
    expected: ['duplicate-name@6:3', 'duplicate-name@8:3'],
  },
  {
    rule: 'states-unknown',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields: { note: { type: string } }
    states:
      initial: draft
      states: [draft, done]
      final: [done, gone]
      editable: { draft: [note, nope], limbo: [note] }
      transitions:
        finish: { from: [draft, wip], to: done }
`,
    expected: ['unknown-state@9:21', 'unknown-field@10:33', 'unknown-state@10:40', 'unknown-state@12:33'],
  },
  {
    rule: 'states-initial',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields: { note: { type: string } }
    states:
      initial: start
      states: [draft, done]
      final: [done]
      transitions:
        finish: { from: draft, to: done }
  B:
    fields: { note: { type: string } }
    states:
      initial: ""
      transitions:
        finish: { from: draft, to: done }
  C:
    fields: { note: { type: string } }
    states:
      transitions:
        finish: { from: draft, to: done }
`,
    expected: ['unknown-initial-state@7:16', 'missing-initial-state@15:16'],
  },
  {
    rule: 'states-graph',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields: { note: { type: string } }
    states:
      initial: draft
      final: [done]
      transitions:
        submit: { from: draft, to: review }
        finish: { from: draft, to: done }
        reopen: { from: done, to: draft }
        revive: { from: ghost, to: done }
`,
    expected: ['dead-end-state@10:36', 'transition-from-final-state@12:25', 'unreachable-state@13:25'],
  },
  {
    rule: 'states-misc',
    spec: `ninefold: 1
service: { name: s }
resources:
  A:
    fields:
      status: { type: integer }
    states:
      initial: draft
      final: [done]
      transitions:
        finish: { from: draft, to: done, when: "record.x ==", after: soon, input: { why: { type: integer, pattern: x } } }
  B:
    fields:
      phase: { type: enum, values: [draft] }
    states:
      field: phase
      initial: draft
      final: [done]
      transitions:
        finish: { from: draft, to: done }
`,
    expected: [
      'state-field-clash@6:23',
      'invalid-guard@11:48',
      'invalid-duration@11:70',
      'format-type-mismatch@11:107',
      'state-field-clash@14:22',
    ],
  },
  {
    rule: 'endpoints',
    spec: `ninefold: 1
service: { name: s }
resources:
  Customer:
    fields: { email: { type: string } }
  Order:
    fields:
      customer: { type: ref, to: Customer }
      total: { type: number }
endpoints:
  Ordr: { operations: [list] }
  Order:
    path: /customers/{customerId}/orders/{shop}
    list:
      filter: [total, status, createdAt]
      sort: [-total, price]
      defaultSort: -createdAt,cost
      expand: [customer, total]
      pageSize: { default: 50, max: 10 }
`,
    expected: [
      'unknown-operation-resource@11:3',
      'unmatched-path-parameter@13:11',
      'unknown-filter-field@15:23',
      'unknown-sort-field@16:22',
      'unknown-sort-field@17:20',
      'unknown-expand-field@18:26',
      'invalid-page-size@19:28',
    ],
  },
  {
    rule: 'routes',
    spec: `ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { total: { type: number } }
    states:
      initial: cart
      final: [placed]
      transitions:
        place: { from: cart, to: placed }
endpoints:
  custom:
    - { name: a, method: GET, path: "/orders/{orderId}", handler: "./h.ts#a" }
    - { name: b, method: POST, path: "/orders/{x}/place", handler: "./h.ts#b" }
    - { name: c, method: POST, path: "/stats/{day}", handler: "./h.ts#c" }
    - { name: c, method: PUT, path: "/stats/{day}", handler: "./h.ts#c" }
`,
    expected: ['duplicate-route@13:37', 'duplicate-route@14:38', 'duplicate-name@16:15'],
  },
  {
    rule: 'reserved paths',
    spec: `ninefold: 1
service: { name: s }
resources:
  Doc:
    fields: { title: { type: string } }
  Note:
    fields: { text: { type: string } }
endpoints:
  Note: { path: /_ninefold/notes }
  custom:
    - { name: health, method: GET, path: /healthz, handler: "./h.ts#a" }
`,
    expected: ['reserved-path@4:3', 'reserved-path@9:17', 'reserved-path@11:42'],
  },
  {
    rule: 'custom',
    spec: `ninefold: 1
service: { name: s }
errors:
  catalogue:
    out_of_stock: { status: 409, title: Out }
endpoints:
  custom:
    - name: a
      method: GET
      path: "/a/{id}/{id}"
      handler: handlers.ts
    - name: b
      method: GET
      path: "/b/{day}"
      handler: "./h.ts#b"
      request: { params: { month: { type: string } } }
      errors: [out_of_stock, not_found, out_of_stok]
`,
    expected: [
      'unmatched-path-parameter@10:13',
      'invalid-handler@11:16',
      'unmatched-path-parameter@14:13',
      'unmatched-path-parameter@16:28',
      'unknown-error-code@17:41',
    ],
  },
  {
    rule: 'paths and keys',
    spec: `ninefold: 1
service: { name: s }
resources:
  User:
    fields: { login: { type: string } }
  Repo:
    fields:
      owner: { type: ref, to: User }
      name: { type: string }
      number: { type: string, sequence: team }
endpoints:
  User: { key: login }
  Repo:
    key: [owner, nam]
    operations: [get, update, replace]
    overrides:
      get: { path: '/repos/{owner}/{repo}/{extra}' }
      update: { method: PUT }
`,
    expected: [
      'duplicate-route@6:3',
      'invalid-sequence@10:41',
      'invalid-sequence@10:41',
      'key-not-unique@12:16',
      'unknown-field@14:18',
      'unmatched-path-parameter@17:20',
    ],
  },
  {
    rule: 'auth',
    spec: `ninefold: 1
service: { name: s }
resources:
  User:
    fields: { login: { type: string } }
  Order:
    fields: { owner: { type: string } }
    states:
      initial: cart
      final: [paid]
      transitions:
        pay: { from: cart, to: paid, roles: [billing, admin] }
endpoints:
  Order:
    require: [key, tokn]
    overrides: { delete: { require: { all: [key, nope] }, roles: [root] } }
auth:
  schemes:
    key: { type: apiKey, in: header }
    jwt: { type: bearer }
    users: { type: basic, users: User }
    people: { type: basic, users: Person }
    anon: { type: basic }
  require: [key, secret]
  roles: { admin: everything }
  rules:
    Ordr: { read: "true" }
    Order: { owner: ownr, read: "record.owner ==", transitions: { pay: "true", refund: "true" } }
`,
    expected: [
      'unknown-role@12:46',
      'unknown-scheme@15:20',
      'unknown-scheme@16:50',
      'unknown-role@16:67',
      'incomplete-scheme@19:5',
      'incomplete-scheme@20:5',
      'incomplete-scheme@21:34',
      'incomplete-scheme@21:34',
      'incomplete-scheme@22:35',
      'incomplete-scheme@23:5',
      'unknown-scheme@24:18',
      'rule-unknown-resource@27:5',
      'unknown-field@28:21',
      'invalid-rule@28:33',
      'unknown-transition@28:80',
    ],
  },
  {
    rule: 'events',
    spec: `ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { hook: { type: string, format: uri }, note: { type: string } }
    states:
      initial: cart
      final: [placed]
      transitions:
        place: { from: cart, to: placed, event: Order.submitted }
  Customer:
    fields: { note: { type: string } }
events:
  auto: [Order, Buyer]
  declared:
    Stock.low: {}
  webhooks:
    events: [Order.created, Order.submitted, Stock.low, Customer.created, Order.placed]
    retry: [5s, soon]
    timeout: 15 seconds
  callbacks:
    Order: { field: note, events: [Order.updated] }
    Customer: { field: hook, events: [Order.created] }
    Buyer: { field: hook, events: [] }
`,
    expected: [
      'unknown-resource@14:17',
      'unknown-event@18:57',
      'unknown-event@18:75',
      'invalid-duration@19:17',
      'invalid-duration@20:14',
      'unknown-callback-field@22:21',
      'unknown-callback-field@23:24',
      'unknown-callback-field@24:5',
    ],
  },
  {
    rule: 'errors',
    spec: `ninefold: 1
service: { name: s }
errors:
  format: custom
  catalogue:
    not_found: { status: 404, title: Missing }
    teapot: { status: 302, title: Tea }
`,
    expected: ['missing-error-payload@4:11', 'error-code-clash@6:5', 'error-status-out-of-range@7:23'],
  },
  {
    rule: 'errors payloads and remaps',
    spec: `ninefold: 1
service: { name: s }
errors:
  format: custom
  payload: { error: { msg: "{mesage}", "list?": { $each: { at: "{pointer}", why: "{reason}" } } } }
  remap:
    unique_violaton: { status: 422 }
  types: { 4xx: invalid, 6xx: odd }
  fieldCodes: { unique: already_exists, "*": invalid }
  fieldMessages: { requird: "can't be blank" }
`,
    expected: [
      'unknown-error-placeholder@5:28',
      'unknown-error-placeholder@5:82',
      'unknown-error-remap@7:5',
      'unknown-error-remap@8:26',
      'unknown-field-code@10:20',
    ],
  },
  {
    rule: 'sessions',
    spec: `ninefold: 1
service: { name: s }
resources:
  User:
    fields:
      email: { type: string, required: true }
      token: { type: string }
endpoints:
  User: { session: { scheme: key, identifier: email, signIn: /users/login } }
auth:
  schemes: { key: { type: apiKey, in: bearer } }
`,
    expected: ['invalid-session@9:11', 'invalid-session@9:11', 'invalid-session@9:30', 'invalid-session@9:47'],
  },
  {
    rule: 'error payload without a format that uses it',
    spec: `ninefold: 1
service: { name: s }
errors:
  payload: { error: "{message}" }
`,
    expected: ['error-payload-ignored@4:3'],
  },
  {
    rule: 'limits',
    spec: `ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { total: { type: number } }
    states:
      initial: cart
      final: [placed]
      transitions:
        place: { from: cart, to: placed }
limits:
  rate:
    default: 100/min
    authFailures: many
    endpoints: { "POST /orders": 10/s, "POST /orders/{x}/place": 1/s, "GET /nowhere": 1/s, "orders": 1/s }
  quotas: { Order.create: 1000/day, Order.place: 5/day, Order.replace: 1/day, Ordr.create: 1/day, Order.create2: x }
  size: { body: huge, endpoints: { "POST /orders": 2mb } }
  timeouts: { request: 10s, headers: forever, endpoints: { "GET /orders": 2s } }
`,
    expected: [
      'invalid-rate@14:19',
      'unknown-limit-target@15:71',
      'unknown-limit-target@15:92',
      'unknown-limit-target@16:57',
      'unknown-limit-target@16:79',
      'unknown-limit-target@16:99',
      'invalid-rate@16:114',
      'invalid-size@17:17',
      'invalid-duration@18:38',
    ],
  },
  {
    rule: 'limits: sizes, time-outs and overload',
    spec: `ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { total: { type: number } }
limits:
  size: { url: 32kb, headers: 16kb, endpoints: { "PATCH /orders/{id}": 0kb } }
  timeouts: { headers: 40s, body: 30s, request: 0s }
  overload: { lag: 200ms, retryAfter: soon, critical: ["GET /orders/{id}", "GET /nowhere"] }
`,
    expected: [
      'limit-conflict@7:16',
      'invalid-size@7:72',
      'limit-conflict@8:24',
      'invalid-duration@8:49',
      'invalid-duration@9:39',
      'unknown-limit-target@9:76',
    ],
  },
  {
    rule: 'limits: a reserve kept for no critical route',
    spec: `ninefold: 1
service: { name: s }
resources:
  Order:
    fields: { total: { type: number } }
limits:
  overload: { lag: 200ms, reserve: 8 }
`,
    expected: ['limit-conflict@7:27'],
  },
  {
    rule: 'versioning',
    spec: `ninefold: 1
service: { name: s }
resources:
  Customer:
    fields: { fullName: { type: string }, email: { type: string } }
versioning:
  scheme: header
  default: "2027-01-01"
  versions:
    - id: "2026-01-15"
    - id: "2026-01-15"
    - id: "2026-05-01"
      changes:
        - { resource: Customer, rename: { from: name, to: fullName } }
        - { resource: Customer, rename: { from: email, to: mail } }
        - { resource: Custmer, add: x }
        - { resource: Customer, add: phone }
        - { resource: Customer, remove: email }
    - id: "2026-09-01"
      changes:
        - { resource: Customer, rename: { from: fullName, to: name } }
  deprecated:
    "2026-01-15": { deprecation: "2026-13-01", sunset: "2027-01-15" }
    "2025-01-01": { sunset: "2026-01-01" }
`,
    expected: [
      'unknown-version@8:12',
      'duplicate-version@11:11',
      'unknown-change-field@15:49',
      'unknown-change-field@15:60',
      'unknown-change-field@16:23',
      'unknown-change-field@17:38',
      'unknown-change-field@18:41',
      'unknown-change-field@21:49',
      'unknown-change-field@21:63',
      'invalid-date@23:34',
      'unknown-version@24:5',
    ],
  },
  {
    rule: 'versioning: change kinds beyond rename, add, remove and retype',
    spec: `ninefold: 1
service: { name: s }
resources:
  Customer:
    fields:
      fullName: { type: string }
      tier: { type: enum, values: [free, pro] }
      address: { type: object, fields: { street: { type: string } } }
    states:
      field: status
      initial: open
      states: { open: {}, done: {} }
      final: [done]
      transitions: { finish: { from: open, to: done } }
versioning:
  scheme: header
  versions:
    - id: v1
    - id: v2
      changes:
        - { resource: Customer, require: fulName }
        - { resource: Customer, enum-add: { field: tier, values: [vip], fallback: pro } }
        - { resource: Customer, enum-add: { field: tier, values: [pro], fallback: pro } }
        - { resource: Customer, move: { from: street, to: address.road } }
        - { remove-operation: Customer.destroy }
        - { add-operation: "POST /customers/{id}/archive" }
        - { resource: Customer, add-transition: close }
        - { add-event: Customer.closed }
        - { error: { code: no_such_code, was: { status: 400 } } }
        - { error: { code: not_found, was: {} } }
        - { resource: Customer, covers: [field-removed] }
        - { resource: Customer, transform: ./t.ts, covers: [field-gone] }
        - { add-transition: finish }
        - { description: nothing }
`,
    expected: [
      'unknown-change-field@21:42',
      'invalid-change@22:67',
      'invalid-change@23:83',
      'unknown-change-field@24:59',
      'unknown-change-target@25:31',
      'unknown-change-target@26:28',
      'unknown-change-target@27:49',
      'unknown-change-target@28:24',
      'unknown-change-target@29:28',
      'invalid-change@30:44',
      'invalid-change@31:11',
      'invalid-change@31:41',
      'invalid-change@32:61',
      'invalid-change@33:11',
      'invalid-change@34:11',
    ],
  },
  {
    rule: 'views and computed fields',
    spec: `ninefold: 1
service: { name: s }
resources:
  User:
    fields:
      username: { type: string }
      tags: { type: array, items: { type: string } }
    views:
      Profile:
        fields: [username, bioo]
        computed:
          following: { type: boolean, cel: "exists(Follow, f, f.follower == caller && f.folowee == record.id)" }
      Page: { fields: [username] }
  Follow:
    fields:
      follower: { type: ref, to: User, view: Profil }
      followee: { type: ref, to: User }
      note: { type: string, view: Profile }
    computed:
      follower: { type: boolean, cel: "exists(User, u, u.id == record.follower)" }
      many: { type: integer, cel: "count(Folow, f, f.follower == caller)" }
      either: { type: boolean, cel: "exists(Follow, f, f.follower == caller || f.followee == caller)" }
      tagged: { type: boolean, cel: "exists(User, u, u.tags == record.note)" }
      typed: { type: integer, cel: "exists(User, u, u.id == caller)" }
endpoints:
  User:
    overrides:
      get: { view: Profile }
      list: { view: Card }
      delete: { view: Profile }
`,
    expected: [
      'unknown-view-field@10:28',
      'unknown-computed-name@12:87',
      'view-name-clash@13:7',
      'unknown-view@16:46',
      'constraint-type-mismatch@18:35',
      'view-name-clash@20:7',
      'unknown-computed-name@21:42',
      'computed-not-sql@22:56',
      'computed-not-sql@23:54',
      'computed-not-sql@24:37',
      'unknown-view@29:21',
      'unknown-view@30:23',
    ],
  },
];
