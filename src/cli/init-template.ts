/**
 * The spec `ninefold init` writes: small, commented, and valid, so `ninefold check` passes on it as is.
 * `schemaHint` is the `$schema` target of the yaml-language-server comment on the first line.
 */
export const initTemplate = (name: string, schemaHint: string): string => `# yaml-language-server: $schema=${schemaHint}
# A Ninefold service interface specification: nine parts, one running service.
# Check it with \`ninefold check service.yaml\`; the Ninefold repository's
# examples/orders/service.yaml uses every part.
ninefold: 1

# 1 purpose: what the service is for, in prose; it heads the docs.
service:
  name: ${name}
  title: Tasks
  purpose: Keeps a team's tasks and moves them from open to done.

# 2 resources: the records the service keeps. id, createdAt and updatedAt come for free.
resources:
  Task:
    idPrefix: tsk
    fields:
      title: { type: string, minLength: 1, maxLength: 200, required: true }
      notes: { type: string, maxLength: 4000 }
      dueOn: { type: date }
      priority: { type: enum, values: [low, normal, high], default: normal }

    # 3 states: a state machine on the \`status\` field; each transition is a POST endpoint.
    states:
      field: status
      initial: open
      final: [done, dropped]
      transitions:
        start: { from: open, to: started }
        finish: { from: started, to: done }
        drop: { from: [open, started], to: dropped }

# 4 endpoints: the operations on each resource, and how lists filter, sort and page.
endpoints:
  Task:
    operations: [list, get, create, update, delete]
    list: { filter: [priority, dueOn], sort: [createdAt, dueOn], pageSize: { default: 20, max: 100 } }

# 5 auth is left out, so every endpoint is public: add \`auth:\` with an apiKey or bearer scheme.

# 6 events: Task.created, Task.updated, Task.deleted and one per transition (Task.started, …).
events:
  auto: true

# 7 errors: your own codes join the built-in catalogue; every error is RFC 9457 problem+json.
errors:
  catalogue:
    task_locked: { status: 423, title: The task is locked }

# 8 limits: rate limits (429 with RateLimit headers) and quotas (docs/limits.md); sizes, time-outs and overload
# shedding, per service or per endpoint (docs/limits-guards.md). All are enforced.
limits:
  rate: { default: 100/min, by: ip }

# 9 versioning: add \`versioning:\` when the API first changes in a breaking way (every version is served at once).
`;
