import { existsSync } from 'node:fs';
import { apiKeyStatus, issueApiKey } from '../parts/auth/keys.ts';
import type { Plan } from '../plan/types.ts';
import { closest } from '../spec/closest.ts';
import { parseDuration } from '../spec/units.ts';
import {
  type ApiKeyRecord,
  databaseTarget,
  openStore,
  type Store,
  StoreError,
  shownTarget,
  storeExists,
} from '../storage/index.ts';
import { type Command, HELP_OPTION, type OptionSpecs, readArgs, usageLine } from './command.ts';
import { loadPlanOrReport } from './load-plan.ts';

const DB_OPTION = {
  db: {
    type: 'string',
    value: 'PATH|URL',
    env: ['NINEFOLD_DATABASE_URL', 'NINEFOLD_DB'],
    defaultText: '<service name>.db of the spec',
    description: 'the service database: a SQLite file or a postgres:// URL',
  },
} as const satisfies OptionSpecs;
const DB_NOTE =
  'Without a spec, --db PATH|URL, NINEFOLD_DATABASE_URL or NINEFOLD_DB names the database; with one, the default is <service name>.db.';
const MAX_SUBJECT_LENGTH = 200;

const fail = (sub: string, message: string, code: number): number => {
  process.stderr.write(`ninefold keys ${sub}: ${message}\n`);
  return code;
};

/**
 * The spec's plan (when a spec is given) and the database: `--db`, else NINEFOLD_DATABASE_URL, else NINEFOLD_DB, else
 * `<service name>.db`.
 */
const target = async (
  sub: string,
  spec: string | undefined,
  db: string | undefined,
): Promise<{ plan: Plan | undefined; dbPath: string } | number> => {
  const plan = spec === undefined ? undefined : await loadPlanOrReport(spec);
  if (spec !== undefined && !plan) return 1;
  const path =
    db ??
    (process.env.NINEFOLD_DATABASE_URL || process.env.NINEFOLD_DB || (plan ? `${plan.service.name}.db` : undefined));
  if (!path)
    return fail(
      sub,
      'give the spec, --db PATH or NINEFOLD_DB (or a postgres:// URL: --db or NINEFOLD_DATABASE_URL) to say which database',
      2,
    );
  return { plan, dbPath: databaseTarget(path) };
};

/** Opens an existing database only: listing or revoking in a new, empty file would only hide a wrong path. */
const withExistingStore = async (sub: string, dbPath: string, fn: (store: Store) => Promise<number>) => {
  if (!(await storeExists(dbPath, existsSync))) return fail(sub, `no database at ${shownTarget(dbPath)}`, 1);
  const store = await openStore(dbPath);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
};

const shown = (k: ApiKeyRecord, now: Date) => ({
  id: k.id,
  subject: k.subject,
  roles: k.roles,
  createdAt: k.createdAt,
  expiresAt: k.expiresAt ?? null,
  revokedAt: k.revokedAt ?? null,
  status: apiKeyStatus(k, now),
});

const CREATE_OPTIONS = {
  role: {
    type: 'string',
    value: 'R',
    multiple: true,
    description: 'a role the spec declares (auth.roles), if any',
  },
  subject: {
    type: 'string',
    value: 'S',
    defaultText: 'the key id',
    description: 'who the key speaks for (principal.subject)',
  },
  expires: { type: 'string', value: 'DURATION', defaultText: 'never', description: 'lifetime: 90d, 24h or P90D' },
  'api-version': {
    type: 'string',
    value: 'V',
    defaultText: 'none',
    description: 'the API version served to requests with this key that name none (versioning)',
  },
  ...DB_OPTION,
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const create: Command<typeof CREATE_OPTIONS> = {
  name: 'keys create',
  summary: 'issue a key; the key text is the last line of output, shown once',
  args: '<spec>',
  options: CREATE_OPTIONS,
  async run(args) {
    const read = readArgs(this, args, { min: 1, max: 1 });
    if (typeof read === 'number') return read;
    const { values, positionals } = read;
    const found = await target('create', positionals[0], values.db);
    if (typeof found === 'number') return found;
    const { plan, dbPath } = found;
    if (!plan) return 1;
    const declared = [...plan.auth.roles.keys()];
    const known = declared.length
      ? `the spec declares ${declared.join(', ')}`
      : 'the spec declares no roles (auth.roles)';
    const roles = [...new Set(values.role ?? [])];
    if (roles.length === 0 && declared.length) return fail('create', `give at least one --role; ${known}`, 2);
    const unknown = roles.filter((r) => !declared.includes(r));
    if (unknown.length) return fail('create', `unknown role ${unknown.map((r) => `"${r}"`).join(', ')}; ${known}`, 2);
    const subject = values.subject;
    if (subject !== undefined && (subject.length === 0 || subject.length > MAX_SUBJECT_LENGTH)) {
      return fail('create', `--subject must be 1 to ${MAX_SUBJECT_LENGTH} characters`, 2);
    }
    const expiresInMs = values.expires === undefined ? undefined : parseDuration(values.expires);
    if (
      values.expires !== undefined &&
      !(expiresInMs !== undefined && expiresInMs > 0 && Number.isFinite(expiresInMs))
    ) {
      return fail('create', `--expires must be a duration like 90d, 24h or P90D (got "${values.expires}")`, 2);
    }
    const apiVersion = values['api-version'];
    const versions = plan.versioning?.ids ?? [];
    if (apiVersion !== undefined && !versions.includes(apiVersion)) {
      const served = versions.length ? `the spec serves ${versions.join(', ')}` : 'the spec declares no versions';
      return fail('create', `unknown --api-version "${apiVersion}"; ${served}`, 2);
    }
    if (![...plan.auth.schemes.values()].some((s) => s.type === 'apiKey')) {
      process.stderr.write('warning: the spec has no apiKey scheme; the key is refused until it declares one\n');
    }
    const store = await openStore(dbPath);
    try {
      // The same migration serve runs, so the file is ready to serve; a refused (destructive) one stops here.
      await store.migrate(plan);
      const { record, key } = await issueApiKey(store, {
        roles,
        prefix: plan.auth.keyPrefix,
        ...(subject !== undefined ? { subject } : {}),
        ...(expiresInMs !== undefined ? { expiresInMs } : {}),
        ...(apiVersion !== undefined ? { apiVersion } : {}),
      });
      process.stdout.write(
        [
          `Created API key ${record.id} in ${shownTarget(dbPath)}`,
          `  subject: ${record.subject}`,
          `  roles:   ${record.roles.join(', ')}`,
          `  expires: ${record.expiresAt ?? 'never'}`,
          ...(record.apiVersion ? [`  version: ${record.apiVersion}`] : []),
          'The key is shown once, below; only its SHA-256 is stored.',
          key,
        ].join('\n') + '\n',
      );
      return 0;
    } catch (error) {
      if (error instanceof StoreError && error.kind === 'migration-refused') return fail('create', error.message, 1);
      throw error;
    } finally {
      await store.close();
    }
  },
};

const FORMATS = ['text', 'json'] as const;

const LIST_OPTIONS = {
  format: { type: 'string', value: 'F', choices: FORMATS, default: 'text', description: 'a table or JSON' },
  ...DB_OPTION,
  ...HELP_OPTION,
} as const satisfies OptionSpecs;

const list: Command<typeof LIST_OPTIONS> = {
  name: 'keys list',
  summary: 'list keys: id, subject, roles, created, expires, status (never a secret)',
  args: '[<spec>]',
  options: LIST_OPTIONS,
  notes: [DB_NOTE],
  async run(args) {
    const read = readArgs(this, args, { min: 0, max: 1 });
    if (typeof read === 'number') return read;
    const { values, positionals } = read;
    const format = values.format ?? 'text';
    const found = await target('list', positionals[0], values.db);
    if (typeof found === 'number') return found;
    return withExistingStore('list', found.dbPath, async (store) => {
      const now = new Date();
      const keys = (await store.apiKeys.list()).map((k) => shown(k, now));
      if (format === 'json') {
        process.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
        return 0;
      }
      if (keys.length === 0) {
        process.stderr.write(`no API keys in ${shownTarget(found.dbPath)}\n`);
        return 0;
      }
      const rows = [
        ['ID', 'SUBJECT', 'ROLES', 'CREATED', 'EXPIRES', 'STATUS'],
        ...keys.map((k) => [k.id, k.subject, k.roles.join(','), k.createdAt, k.expiresAt ?? 'never', k.status]),
      ];
      const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
      for (const r of rows)
        process.stdout.write(
          `${r
            .map((c, i) => c.padEnd(widths[i] ?? 0))
            .join('  ')
            .trimEnd()}\n`,
        );
      return 0;
    });
  },
};

const REVOKE_OPTIONS = { ...DB_OPTION, ...HELP_OPTION } as const satisfies OptionSpecs;

const revoke: Command<typeof REVOKE_OPTIONS> = {
  name: 'keys revoke',
  summary: 'revoke a key; the next request that uses it is refused',
  args: '[<spec>] <id>',
  options: REVOKE_OPTIONS,
  notes: [DB_NOTE],
  async run(args) {
    const read = readArgs(this, args, { min: 1, max: 2 });
    if (typeof read === 'number') return read;
    const { values, positionals } = read;
    const [spec, id] = positionals.length === 2 ? positionals : [undefined, positionals[0]];
    const found = await target('revoke', spec, values.db);
    if (typeof found === 'number' || id === undefined) return typeof found === 'number' ? found : 2;
    return withExistingStore('revoke', found.dbPath, async (store) => {
      if (await store.transaction(() => store.apiKeys.revoke(id, new Date()))) {
        process.stdout.write(`revoked ${id}\n`);
        return 0;
      }
      const existing = await store.apiKeys.find(id);
      const why = existing
        ? `${id} was already revoked at ${existing.revokedAt}`
        : `no key ${id} in ${shownTarget(found.dbPath)}`;
      return fail('revoke', why, 1);
    });
  },
};

const SUBCOMMANDS: Record<string, Command> = { create, list, revoke };

const overview = () =>
  [
    'Usage:',
    ...Object.values(SUBCOMMANDS).map((c) => `  ${usageLine(c)}\n      ${c.summary}`),
    '',
    DB_NOTE,
    'Run `ninefold keys <command> --help` for its options.',
  ].join('\n');

export const keysCommand: Command<typeof HELP_OPTION> = {
  name: 'keys',
  summary: 'issue, list and revoke API keys (kept in the service database)',
  args: 'create|list|revoke …',
  options: HELP_OPTION,
  async run(args) {
    const [name, ...rest] = args;
    const sub = name === undefined ? undefined : SUBCOMMANDS[name];
    if (sub) return sub.run(rest);
    const help = name === '--help' || name === '-h' || name === 'help';
    if (name !== undefined && !help) {
      const near = closest(name, Object.keys(SUBCOMMANDS));
      process.stderr.write(`ninefold keys: unknown command "${name}"${near ? `; did you mean "${near}"?` : ''}\n`);
    }
    process.stdout.write(`${overview()}\n`);
    return help ? 0 : 2;
  },
};
