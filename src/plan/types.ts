import type { AuthPlan } from '../parts/auth/plan.ts';
import type { EventsPlan } from '../parts/events/plan.ts';
import type { ComputedQueryPlan } from '../parts/resources/computed-cel.ts';
import type { TallyPlan } from '../parts/resources/computed-tally.ts';
import type { FieldSpec, FieldType, NormalizeOp } from '../parts/resources/field-schema.ts';
import type { VersioningPlan } from '../parts/versioning/plan.ts';
import type { ServiceSpec } from '../spec/schema.ts';
import type { Rate } from '../spec/units.ts';
import type { RelatedCondition } from '../storage/index.ts';

/** The frozen plan: everything the runtime, the docs and the OpenAPI emitter need, computed once. */
export interface Plan {
  readonly spec: ServiceSpec;
  /** Directory of the spec file: handler modules resolve from here. */
  readonly dir: string;
  readonly service: ServicePlan;
  readonly resources: readonly ResourcePlan[];
  readonly resourcesByName: ReadonlyMap<string, ResourcePlan>;
  readonly custom: readonly CustomEndpointPlan[];
  readonly errors: ErrorsPlan;
  readonly limits: LimitsPlan;
  readonly auth: AuthPlan;
  readonly events: EventsPlan;
  /** Part 9; undefined when the spec declares no versions. */
  readonly versioning?: VersioningPlan;
}

export interface ServicePlan {
  readonly name: string;
  readonly title: string;
  readonly purpose?: string;
  readonly behaviour?: string;
  readonly basePath: string;
}

export interface FieldPlan {
  readonly name: string;
  readonly type: FieldType;
  readonly spec: FieldSpec;
  readonly required: boolean;
  readonly nullable: boolean;
  readonly readOnly: boolean;
  readonly writeOnly: boolean;
  readonly unique: boolean;
  /** Storage column name (snake_case). */
  readonly column: string;
  readonly hasDefault: boolean;
  readonly default?: unknown;
  /** Set for ref fields. */
  readonly ref?: {
    readonly to: string;
    readonly onDelete: 'restrict' | 'cascade' | 'setNull';
    /** The target's id style when it is not a ULID: integer references travel as JSON integers. */
    readonly idStyle?: IdStyle;
    /** The view of the target an expanded reference is shown as (the whole record when absent). */
    readonly view?: string;
    /** Always shown as the record it names, in every answer, not only when a request asks with `expand`. */
    readonly embed?: boolean;
  };
  /** An integer numbered 1, 2, 3… per value of this ref field, assigned at create (`sequence: repo`). */
  readonly sequence?: string;
  /** True for the state field of a state machine (read-only, set by transitions). */
  readonly isState?: boolean;
  /** The field's own normalisers, in the spec's order (fields nested in it may have theirs); see resources/normalize.ts. */
  readonly normalize?: readonly NormalizeOp[];
  /** Set for a field the service derives from another one and stores (read-only on the wire). */
  readonly derive?: DerivePlan;
}

/** How a derived field gets its value: the slug of `from`, unique with a `-2`, `-3`… suffix when declared unique. */
export interface DerivePlan {
  readonly kind: 'slug';
  readonly from: string;
  /** `rederive`: a write that changes `from` derives the value again; `keep`: the first value stays. */
  readonly onChange: 'rederive' | 'keep';
  /** The field's maxLength: slugs (with their suffix) are cut to fit. */
  readonly maxLength?: number;
}

export interface TransitionPlan {
  readonly name: string;
  readonly from: readonly string[];
  readonly to: string;
  readonly description?: string;
  readonly when?: string;
  readonly input?: Readonly<Record<string, FieldSpec>>;
  readonly roles: readonly string[];
  readonly afterMs?: number;
  readonly after?: string;
  readonly event: string;
  readonly path: string;
}

export interface StatePlan {
  readonly name: string;
  readonly description?: string;
  readonly final: boolean;
  readonly editable?: readonly string[];
}

export interface StateMachinePlan {
  readonly field: string;
  readonly initial: string;
  readonly states: readonly StatePlan[];
  readonly transitions: readonly TransitionPlan[];
}

export type Operation = 'list' | 'get' | 'create' | 'update' | 'replace' | 'delete';

export interface SortKey {
  readonly field: string;
  readonly desc: boolean;
}

export interface ListPlan {
  readonly filter: readonly string[];
  readonly sort: readonly string[];
  readonly defaultSort: readonly SortKey[];
  readonly pageSize: { readonly default: number; readonly max: number };
  readonly expand: readonly string[];
  /** Query parameters the spec names itself (`?author=`, `?favorited=`, `?tag=`), by wire name. */
  readonly params: ReadonlyMap<string, ListParamPlan>;
}

/** A declared list parameter: a filter on a field of the record, or a condition through other resources. */
export interface ListParamPlan {
  readonly name: string;
  readonly description?: string;
  /** What it compares, as written: `author.username`, `Favorite.user.username`. */
  readonly path: string;
  /** The compared field's type and spec: the value is read as it (an item of an array with contains). */
  readonly compared: Pick<FieldPlan, 'type' | 'spec'>;
  readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'contains';
  /** A field of the record itself: a plain filter. */
  readonly own?: string;
  /** Through references or a join: the condition for a value. */
  readonly related?: (value: unknown) => RelatedCondition;
}

/** A list of its own path over a resource. */
export interface NamedListPlan {
  readonly name: string;
  readonly path: string;
  readonly summary?: string;
  /** The records `exists(...)` keeps, compiled to a subquery with the caller's values bound per request. */
  readonly filter?: { readonly cel: string; readonly query: ComputedQueryPlan };
  /** The distinct values of a field instead of records. */
  readonly distinct?: {
    readonly field: string;
    readonly counts: boolean;
    readonly items: string | null;
    readonly compared: Pick<FieldPlan, 'type' | 'spec'>;
  };
}

/** Add and remove a record of a join resource keyed by the caller and the record a path names. */
export interface RelationPlan {
  readonly caller: string;
  readonly target: string;
  readonly targetResource: string;
  readonly path: string;
  readonly params: readonly string[];
  readonly add: 'POST' | 'PUT';
  readonly answer: 'target' | 'none';
  readonly view?: string;
  /** The answer's envelope; undefined: the target's own. */
  readonly envelope?: string | null;
  readonly missing: 'ok' | 'not_found';
}

export interface ResourcePlan {
  readonly name: string;
  readonly description?: string;
  /** Collection path relative to the base path, e.g. /orders or /customers/{customerId}/orders. */
  readonly collectionPath: string;
  /** Item path, e.g. /orders/{id}. */
  readonly itemPath: string;
  /** Path parameters of a nested collection, bound to ref fields: customerId → customer. */
  readonly parentParams: ReadonlyArray<{
    readonly param: string;
    readonly field: string;
    /** The path parameters that name the parent by its natural key, in order (the last is `param`). */
    readonly params?: readonly string[];
  }>;
  /** Id style: ulid (prefixed ULID, the default), integer (1, 2, 3…), uuidv7. */
  readonly idStyle: IdStyle;
  /** Natural key: the fields an item path binds (empty: the id). */
  readonly key: readonly string[];
  /** The item path (`itemPath`) bound: transitions and history hang under it, Location headers follow it. */
  readonly item: BoundPath;
  /** Every route of the resource's operations (the caller's own record too), in the order they are served. */
  readonly routes: readonly ResourceRoute[];
  readonly table: string;
  readonly idPrefix?: string;
  readonly fields: readonly FieldPlan[];
  readonly fieldsByName: ReadonlyMap<string, FieldPlan>;
  readonly states?: StateMachinePlan;
  readonly operations: ReadonlySet<Operation>;
  readonly list: ListPlan;
  readonly indexes: ReadonlyArray<{
    readonly fields: readonly string[];
    readonly unique: boolean;
    readonly name?: string;
  }>;
  /** Read-only fields computed per caller in the record's own query (never stored, never in events). */
  readonly computed: readonly ComputedFieldPlan[];
  /** Named projections of the resource, by name. */
  readonly views: ReadonlyMap<string, ViewPlan>;
  /** The view an operation answers with (`endpoints.<R>.overrides.<op>.view`), when not the whole record. */
  readonly answerViews: Readonly<Partial<Record<Operation, string>>>;
  /** The constant `object` member of every answer (Stripe's `"object": "customer"`). */
  readonly object?: string;
  /** How this resource's records travel: naming, envelopes, paging (endpoints.wire and its own `wire`). */
  readonly wire: WirePlan;
  /** Lists of their own paths (a feed, the distinct tags). */
  readonly lists: readonly NamedListPlan[];
  /** This resource is a join of the caller and a target, added and removed through one path. */
  readonly relation?: RelationPlan;
  /** A user store that signs up and signs in (endpoints.<R>.session). */
  readonly session?: SessionPlan;
}

/** Sign-up (create), sign-in and the caller's own record, answered with a token signed by `scheme`. */
export interface SessionPlan {
  readonly scheme: string;
  readonly field: string;
  readonly identifier: string;
  readonly password: string;
  readonly signIn: string;
  readonly expiresInMs: number;
}

export type PagingStyle = 'cursor' | 'offset' | 'page' | 'starting_after';

/** A member of a list answer that does not depend on the page: a constant, or a template over the request path. */
export interface ListExtraPlan {
  readonly name: string;
  readonly value: string | number | boolean;
  /** The value is a string with `{path}` in it. */
  readonly templated: boolean;
}

/** The members of a list answer, as the wire names them. */
export interface ListEnvelopePlan {
  /** The member holding the page; null: the answer is the bare array. */
  readonly items: string | null;
  /** Cursor paging: the next cursor's member. */
  readonly next?: string;
  /** The count of every match; offset paging counts always, page paging when this is named. */
  readonly total?: string;
  /** starting_after paging: whether more records follow. */
  readonly hasMore?: string;
  readonly extras: readonly ListExtraPlan[];
}

/** One level of renamed fields: the wire name of each field, and how to rename inside it (nested objects). */
export interface WireNames {
  /** Engine name → wire name, for every field of this level that the naming changes. */
  readonly out: ReadonlyMap<string, { readonly name: string; readonly inner?: WireNames }>;
  /** Wire name → engine name: the same, backwards. */
  readonly in: ReadonlyMap<string, { readonly name: string; readonly inner?: WireNames }>;
}

export interface WirePlan {
  readonly naming: 'camelCase' | 'snake_case';
  readonly paging: PagingStyle;
  readonly list: ListEnvelopePlan;
  /** Single-record envelope of requests and answers: `user` → `{"user": {...}}`. */
  readonly envelope?: string;
  /** Every name on the wire is the engine's own (no renaming, no envelope, no `object`): answers pass untouched. */
  readonly plain: boolean;
  /** The record's renamed fields (empty maps under camelCase); see endpoints/wire-names.ts for the walkers. */
  readonly names: WireNames;
  /** The wire name of a field path: `lines/0/unitPrice` → `lines/0/unit_price` (for error pointers). */
  readonly pointer: (enginePointer: string) => string;
}

/** A computed field: its declaration and the subquery its CEL compiled to. */
export interface ComputedFieldPlan {
  readonly name: string;
  readonly type: 'boolean' | 'integer';
  readonly cel: string;
  readonly description?: string;
  readonly query: ComputedQueryPlan;
  /** Set when the database keeps the count in a column (a plain count of records pointing here). */
  readonly tally?: TallyPlan;
}

/** A named projection of a resource. */
export interface ViewPlan {
  readonly name: string;
  readonly description?: string;
  /** The declared and system fields shown, in the spec's order. */
  readonly fields: readonly string[];
  /** The computed fields shown after them: the resource's that `fields` names, then the view's own. */
  readonly computed: readonly ComputedFieldPlan[];
}

export type IdStyle = 'ulid' | 'integer' | 'uuidv7';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a route's path parameters name: parents by their keys, then the record by its key (or id). */
export interface PathBinding {
  /** Each group of parameters names one parent (a ref field) by the target's key; a ULID parent takes one. */
  readonly parents: ReadonlyArray<{ readonly params: readonly string[]; readonly field: string }>;
  /** The parameters that name the record itself (item routes): its key fields not given by a parent, or its id. */
  readonly item: readonly string[];
}

/** A path and what its parameters name. */
export interface BoundPath {
  /** Relative to the base path, e.g. /articles/{slug}. */
  readonly path: string;
  /** The caller's own record (`self`): no parameter names it, the principal does. */
  readonly self: boolean;
  readonly binding: PathBinding;
  /** True when the handlers can take the path's parameters as they come (ids, the collection's own names). */
  readonly plain: boolean;
}

/** One operation of a resource as it is served. */
export interface ResourceRoute extends BoundPath {
  readonly operation: Operation;
  readonly method: HttpMethod;
}

export interface CustomEndpointPlan {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly summary?: string;
  readonly handler: { readonly module: string; readonly export: string };
  readonly params?: Readonly<Record<string, FieldSpec>>;
  readonly query?: Readonly<Record<string, FieldSpec>>;
  readonly body?: Readonly<Record<string, FieldSpec>>;
  readonly response?: {
    readonly status: number;
    readonly fields?: Readonly<Record<string, FieldSpec>>;
    readonly list: boolean;
  };
  readonly errors: readonly string[];
}

export interface ErrorEntryPlan {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly description?: string;
  /** The problem `type` when it is a registered one rather than `typeBase` + code. */
  readonly type?: string;
  readonly builtIn: boolean;
}

/** How one code's occurrences read, beyond its catalogue entry (errors.remap). */
export interface ErrorWording {
  readonly message?: string;
  readonly field?: string;
  readonly type?: string;
}

export interface ErrorsPlan {
  readonly format: 'problem+json' | 'custom' | 'per-field' | 'stripe' | 'github';
  readonly typeBase: string;
  /** Built-in and service codes, with the spec's remapped statuses and titles. */
  readonly catalogue: ReadonlyMap<string, ErrorEntryPlan>;
  /** The payload template of every format but problem+json (a preset's, or the spec's own). */
  readonly payload?: unknown;
  readonly wording: ReadonlyMap<string, ErrorWording>;
  /** Field codes renamed on the wire ("*": every other). */
  readonly fieldCodes: ReadonlyMap<string, string>;
  readonly fieldMessages: ReadonlyMap<string, string>;
  /** "{type}" by code, then by status class (4xx, 5xx). */
  readonly types: ReadonlyMap<string, string>;
  readonly documentation?: string;
}

export interface LimitsPlan {
  readonly bodyBytes: number;
  readonly maxPageSize: number;
  readonly depth: number;
  readonly requestTimeoutMs: number;
  readonly rate?: RatePlan;
  /** Successful calls per caller per calendar period, by `Resource.operation` (or transition). */
  readonly quotas: ReadonlyMap<string, Rate>;
  /** Proxies (addresses, CIDRs) whose X-Forwarded-For / Forwarded is believed. */
  readonly trustProxy: readonly string[];
  /** redis://… where rate counters are shared; undefined: in process (NINEFOLD_REDIS_URL overrides). */
  readonly store?: string;
  readonly onStoreFailure: 'open' | 'closed';
  /** Sizes, time-outs and overload beyond the four above (limits.size, limits.timeouts, limits.overload). */
  readonly guards: GuardsPlan;
}

export interface RatePlan {
  readonly default?: Rate;
  readonly by: 'principal' | 'ip';
  /** By the spec's key: a route ("POST /orders") or an operation (Order.place, a custom endpoint's name). */
  readonly endpoints: ReadonlyMap<string, Rate>;
  /** The default for callers with a role (the highest wins); `anonymous`: callers without credentials. */
  readonly roles: ReadonlyMap<string, Rate>;
}

/** What the limits part enforces on every request besides rates and quotas. Route maps are keyed by routeKey(). */
export interface GuardsPlan {
  /** Most items any array of a body may hold. */
  readonly arrayItems: number;
  /** Longest request target (path and query), in bytes: 414 past it. */
  readonly urlBytes: number;
  /** Node's maxHeaderSize: request line and headers together; 431 past it. */
  readonly headerBytes: number;
  /** Body limits of single routes, in bytes. */
  readonly bodyBytes: ReadonlyMap<string, number>;
  /** Time to receive the request line and headers; 408 past it. */
  readonly headersTimeoutMs: number;
  /** Time to receive the whole request; 408 past it. */
  readonly receiveTimeoutMs: number;
  /** Time budgets of single routes. */
  readonly timeoutMs: ReadonlyMap<string, number>;
  readonly overload?: OverloadPlan;
}

export interface OverloadPlan {
  readonly lagMs: number;
  readonly retryAfterS: number;
  /** Routes still served while overloaded, up to `reserve` at once (the health checks always are). */
  readonly critical: ReadonlySet<string>;
  /** Requests the critical routes may have in flight at once while overloaded; past it they are shed too. */
  readonly reserve: number;
}
