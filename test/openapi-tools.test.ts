import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildAsyncApi } from '../src/emit/asyncapi.ts';
import { buildOpenApi } from '../src/emit/openapi.ts';
import { buildOpenApiAt } from '../src/emit/versioned.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { createServer } from '../src/runtime/server.ts';
import { checkFile } from '../src/spec/check.ts';
import { SqliteStore } from '../src/storage/index.ts';

type Json = Record<string, unknown>;

/** Every example, and a fixture with a pattern no stock example matches, an owner field and a create-only resource. */
const FIXTURE = 'test/fixtures/openapi-truth/service.yaml';
const specFiles = [
  ...readdirSync('examples').flatMap((dir) =>
    ['service.yaml', 'service.ts'].map((f) => join('examples', dir, f)).filter((f) => existsSync(f)),
  ),
  FIXTURE,
  'test/fixtures/shapes-wire/service.yaml',
  // Natural keys, nested keys, the caller's own record, integer and UUIDv7 ids.
  'test/fixtures/paths/service.yaml',
  'test/fixtures/relations/service.yaml',
  // Error payload presets, remapped codes, key and token words (issue 17 items 9–11).
  ...readdirSync('test/fixtures/errauth').map((f) => join('test/fixtures/errauth', f)),
];

/** Each spec once per declared API version (/openapi/<version>.json), and once as /openapi.json. */
const documents = specFiles.flatMap((file) => {
  const raw = file.endsWith('.yaml') ? (parse(readFileSync(file, 'utf8')) as Json) : {};
  const versions = ((raw.versioning as { versions?: Array<{ id: string }> } | undefined)?.versions ?? []).map(
    (v) => v.id,
  );
  return [[file, ''] as const, ...versions.map((v) => [file, v] as const)];
});

const documentOf = async (file: string, version: string) => {
  const plan = await planOf(file);
  return version ? buildOpenApiAt(plan, version) : buildOpenApi(plan);
};

const planOf = async (file: string) => {
  const { spec, dir } = await checkFile(file);
  if (!spec) throw new Error(`${file} does not pass its checks`);
  return buildPlan(spec, dir);
};

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/** Every example in the document with the schema it illustrates, and where it is. */
const examplesOf = (doc: Json): Array<{ at: string; schema: unknown; example: unknown }> => {
  const out: Array<{ at: string; schema: unknown; example: unknown }> = [];
  const deref = (value: unknown): unknown => {
    const $ref = (value as { $ref?: string } | undefined)?.$ref;
    if (!$ref?.startsWith('#/components/examples/')) return value;
    return (doc.components as Record<string, Record<string, unknown>>).examples?.[
      $ref.slice('#/components/examples/'.length)
    ];
  };
  const walk = (node: unknown, at: string) => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => {
        walk(n, `${at}/${i}`);
      });
      return;
    }
    if (!node || typeof node !== 'object') return;
    const o = node as Json;
    // A schema's `examples` is an array; a parameter's or a media type's is a map of Example objects.
    if (Array.isArray(o.examples)) for (const example of o.examples) out.push({ at, schema: o, example });
    if (o.schema && o.example !== undefined) out.push({ at, schema: o.schema, example: o.example });
    if (o.schema && o.examples && !Array.isArray(o.examples))
      for (const [name, e] of Object.entries(o.examples as Json))
        out.push({ at: `${at}/examples/${name}`, schema: o.schema, example: (deref(e) as Json).value });
    for (const [k, v] of Object.entries(o)) if (k !== 'examples' && k !== 'example') walk(v, `${at}/${k}`);
  };
  walk(doc, '#');
  return out;
};

describe.each(documents)('the OpenAPI document of %s, API version %s', (file, version) => {
  it('has no error under spectral:oas', async () => {
    const doc = await documentOf(file, version);
    const spectral = new spectralCore.Spectral();
    spectral.setRuleset({ extends: [[oas as never, 'recommended']] });
    const results = await spectral.run(new spectralCore.Document(JSON.stringify(doc), spectralParsers.Json, file));
    const errors = results.filter((r) => r.severity === 0).map((r) => `${r.code} ${r.path.join('.')} ${r.message}`);
    expect(errors).toEqual([]);
  });

  it('has no error under Redocly’s recommended rules', async () => {
    const doc = await documentOf(file, version);
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: `${file}.json`, config });
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId} ${p.location[0]?.pointer} ${p.message}`);
    expect(errors).toEqual([]);
  });

  it('gives examples that its own schemas accept', async () => {
    const doc = JSON.parse(JSON.stringify(await documentOf(file, version))) as Json;
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addFormat('decimal', true);
    ajv.addSchema({ components: doc.components }, 'doc');
    const local = (schema: unknown) =>
      JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as Json;
    const found = examplesOf(doc);
    expect(found.length).toBeGreaterThan(3);
    const broken = found.flatMap(({ at, schema, example }) => {
      const validate = ajv.compile(local(schema));
      return validate(example) ? [] : [`${at}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(example)}`];
    });
    expect(broken).toEqual([]);
  });

  it.skipIf(version === '')('has the operations of /openapi.json, in this version’s shapes', async () => {
    const operations = (doc: Json) =>
      Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
        Object.keys(item).map((m) => `${m} ${path}`),
      );
    const [newest, here] = [await documentOf(file, ''), await documentOf(file, version)];
    expect(operations(here)).toEqual(operations(newest));
    expect((here.info as Json).version).toBe(version);
  });

  it.skipIf(version !== '')('documents exactly the routes the server mounts (pages aside)', async () => {
    const plan = await planOf(file);
    const lines: string[] = [];
    const dbPath = join(tmpdir(), `ninefold-routes-${process.pid}-${Date.now()}.db`);
    const store = new SqliteStore({ path: dbPath });
    try {
      await store.migrate(plan);
      const app = await createServer(plan, { store, logLevel: 'debug', logStream: { write: (l) => lines.push(l) } });
      await app.close();
    } finally {
      await store.close();
      for (const suffix of ['', '-wal', '-shm']) await rm(`${dbPath}${suffix}`, { force: true });
    }
    // The pages (the documents themselves, the reference page and its script) are for people, not clients.
    const isPage = (path: string) =>
      ['/openapi.json', '/asyncapi.json'].includes(path) || /^\/(docs|openapi|asyncapi)(\/|$)/.test(path);
    const mounted = lines
      .map((l) => JSON.parse(l) as { msg: string; method: string; path: string })
      .filter((l) => l.msg === 'route' && !isPage(l.path))
      .map((l) => `${l.method} ${l.path}`)
      .sort();
    const documented = Object.entries(buildOpenApi(plan).paths as Record<string, Json>)
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(mounted).toEqual(expect.arrayContaining(['GET /healthz', 'GET /readyz']));
    expect(documented).toEqual(mounted);
  });
});

describe('what the document promises of the caller', () => {
  it('does not require the owner field the server fills from the caller, nor offer it in a patch', async () => {
    const schemas = (buildOpenApi(await planOf(FIXTURE)).components as { schemas: Record<string, Json> }).schemas;
    expect(schemas.LoanCreate?.required).toEqual(['book']);
    expect(Object.keys(schemas.LoanCreate?.properties as Json)).toContain('member');
    const ordersSchemas = (
      buildOpenApi(await planOf('examples/orders/service.yaml')).components as { schemas: Record<string, Json> }
    ).schemas;
    expect(ordersSchemas.OrderCreate?.required ?? []).not.toContain('customer');
    expect(Object.keys(ordersSchemas.OrderPatch?.properties as Json)).not.toContain('customer');
  });

  it('documents only the events that can happen, in the webhooks and in AsyncAPI', async () => {
    const plan = await planOf(FIXTURE);
    expect(Object.keys(buildOpenApi(plan).webhooks as Json)).toEqual([
      'Book.created',
      'Book.updated',
      'Book.deleted',
      'Loan.created',
      'Loan.deleted',
    ]);
    expect(Object.keys(buildAsyncApi(plan).channels as Json)).not.toContain('Loan.updated');
  });

  it('names operations with the right article and lets any issued id through {id}', async () => {
    const doc = buildOpenApi(await planOf('examples/orders/service.yaml')) as {
      paths: Record<string, Record<string, Json>>;
    };
    expect(doc.paths['/orders']?.post?.summary).toBe('Create an Order');
    expect(doc.paths['/customers']?.post?.summary).toBe('Create a Customer');
    const parameters = (doc.paths['/orders/{id}']?.get?.parameters ?? []) as Json[];
    const id = parameters.find((p) => p.name === 'id') as { schema: Json };
    expect(id.schema.pattern).toBeUndefined();
    expect(doc.paths['/healthz']?.get?.security).toEqual([]);
  });
});

/** The extension members the code puts on a problem: the object literal keys of each ApiError's 4th argument. */
const extensionMembersInCode = (): Map<string, string> => {
  const found = new Map<string, string>();
  const visit = (file: string, node: ts.Node) => {
    if (ts.isNewExpression(node) && node.expression.getText() === 'ApiError') {
      const extensions = node.arguments?.[3];
      if (extensions && ts.isObjectLiteralExpression(extensions))
        for (const p of extensions.properties)
          if (p.name) found.set(ts.isStringLiteral(p.name) ? p.name.text : p.name.getText(), file);
    }
    ts.forEachChild(node, (child) => visit(file, child));
  };
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.test.ts')) {
        const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
        visit(path, source);
      }
    }
  };
  walk('src');
  return found;
};

describe('the Problem schema', () => {
  it('lists every extension member the server sends, so a typed client can read it', async () => {
    const doc = buildOpenApi(await planOf('examples/orders/service.yaml')) as {
      components: { schemas: Record<string, Json> };
    };
    const documented = Object.keys(doc.components.schemas.Problem?.properties as Json);
    const sent = extensionMembersInCode();
    expect(sent.size).toBeGreaterThan(4);
    for (const [member, file] of sent) expect(documented, `${member} (sent in ${file})`).toContain(member);
    expect(documented).toEqual(expect.arrayContaining(['currentEtag', 'currentState', 'allowedTransitions', 'errors']));
  });
});

describe('the AsyncAPI stream server', () => {
  it('declares the security the stream asks for, and none when it is public', async () => {
    const orders = buildAsyncApi(await planOf('examples/orders/service.yaml')) as {
      servers: { stream: Json };
      components: { securitySchemes?: Record<string, Json> };
    };
    expect(orders.servers.stream.security).toEqual([
      { $ref: '#/components/securitySchemes/key' },
      { $ref: '#/components/securitySchemes/token' },
    ]);
    expect(orders.components.securitySchemes?.key).toEqual(
      expect.objectContaining({ type: 'httpApiKey', in: 'header' }),
    );
    const open = await planOf(FIXTURE);
    const fixture = buildAsyncApi({ ...open, auth: { ...open.auth, schemes: new Map() } }) as {
      servers: { stream: Json };
    };
    expect(fixture.servers.stream.security).toBeUndefined();
  });
});
