import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderDocs } from '../src/emit/index.ts';
import { buildPlan } from '../src/plan/build-plan.ts';
import { checkFile } from '../src/spec/check.ts';
import type { ServiceSpec } from '../src/spec/schema.ts';

const ROOT = resolve(import.meta.dirname, '..');
// The seed document the project comes from, kept in the repository so a clone alone can test against it;
// where the shared folder sits beside the clone, a test checks the copy has not drifted from it.
const SEED = resolve(ROOT, 'test/fixtures/seed-service-interface-specification.md');
const SHARED_SEED = resolve(ROOT, '../shared/seed/service-interface-specification.md');
const CHROMIUM = '/usr/bin/chromium';
const HEADINGS = [
  'What the service does',
  'Resources and their fields',
  'States and transitions',
  'Endpoints',
  'Authentication',
  'Events',
  'Errors',
  'Limits',
  'Versioning',
];

const normalise = (text: string) => `${text.replace(/[ \t]+$/gm, '').trimEnd()}\n`;

const docsOf = async (file: string, format: 'md' | 'html' = 'md') => {
  const { spec, diagnostics, dir } = await checkFile(file);
  if (!spec) throw new Error(`${file} has errors: ${JSON.stringify(diagnostics, null, 2)}`);
  return renderDocs(buildPlan(spec, dir), format);
};

/** Every part filled, small enough to read in the test. */
const FULL_SPEC = `
ninefold: 1
service: { name: tickets, title: Help desk, purpose: Tracks support tickets. }
resources:
  Ticket:
    fields:
      subject: { type: string, required: true, maxLength: 200 }
      priority: { type: enum, values: [low, high], default: low }
    states:
      initial: open
      transitions:
        close: { from: open, to: closed, roles: [agent], input: { reason: { type: string, required: true } } }
        reopen: { from: closed, to: open, after: 7d }
endpoints:
  Ticket: { list: { filter: [priority], sort: [createdAt] } }
  custom:
    - { name: stats, method: GET, path: /stats, handler: ./h.ts#stats, response: { fields: { open: { type: integer } } } }
auth:
  schemes: { key: { type: apiKey, in: header, name: X-Api-Key } }
  require: [key]
  roles: { agent: Support agent }
events:
  auto: true
  declared: { Ticket.escalated: { payload: { ticket: { type: string, required: true } } } }
  webhooks: { signing: standard-webhooks, retry: [5s, 5m] }
  stream: { path: /events }
errors:
  catalogue: { ticket_locked: { status: 409, title: The ticket is locked } }
limits:
  rate: { default: 100/min }
  size: { body: 512kb }
  timeouts: { request: 5s }
versioning:
  scheme: path
  versions: [{ id: v1 }, { id: v2, changes: [{ resource: Ticket, add: priority }] }]
  deprecated: { v1: { sunset: "2027-01-01" } }
`;
const fullPlan = () => buildPlan(parse(FULL_SPEC) as ServiceSpec, ROOT);

describe('the nine-part document', () => {
  it('of the empty spec is the seed document', async () => {
    expect(normalise(await docsOf(join(ROOT, 'examples/empty/service.yaml')))).toBe(
      normalise(readFileSync(SEED, 'utf8')),
    );
  });

  it.runIf(existsSync(SHARED_SEED))('compares against a copy of the seed that matches the shared original', () => {
    expect(readFileSync(SEED, 'utf8')).toBe(readFileSync(SHARED_SEED, 'utf8'));
  });

  it('of a spec filling every part shows every part', () => {
    const md = renderDocs(fullPlan(), 'md');
    expect(md).not.toContain('not shown');
    expect(md.match(/^## .*/gm)).toEqual(HEADINGS.map((h) => `## ${h}`));
    expect(md).toMatch(/^# Help desk — Service Interface Specification$/m);
    expect(md).toContain('The specification defines every part.');
    expect(md).toContain('```mermaid\nstateDiagram-v2\n  [*] --> open\n  open --> closed: close');
    expect(md).toContain('| `subject` | string |  | yes |  | maxLength 200 |  |');
    expect(md).toContain('| `priority` | enum |  | no | `"low"` | one of `low`, `high` |  |');
    expect(md).toContain(
      '| `close` | `open` | `closed` |  | `reason` (string, required) | `agent` |  | `Ticket.closed` |',
    );
    expect(md).toContain('| POST | `/tickets/{id}/close` | transition `close` |');
    expect(md).toContain('#### `GET /stats` — stats');
    expect(md).toContain('| `key` | apiKey | `X-Api-Key` | header |');
    expect(md).toContain('| `Ticket.created` | Ticket record created |');
    expect(md).toContain('#### `Ticket.escalated`');
    expect(md).toContain('- Retries after: `5s`, `5m` (each ±10 %');
    expect(md).toContain('| `ticket_locked` | 409 | The ticket is locked | service |');
    expect(md).toContain('| `not_found` | 404 |');
    expect(md).toContain(
      '| every route (policy `default`) | 100 per minute | per caller (its address when anonymous) |',
    );
    expect(md).not.toContain('not yet enforced: no request');
    expect(md).toContain('| request body | 512 KiB |');
    expect(md).toContain(
      '#### `v1`\n\nDeprecated; answers 410 from 2027-01-01. Its OpenAPI document: `/openapi/v1.json`.',
    );
    expect(md).toContain('- Ticket: `priority` is added; earlier versions neither see it nor may send it.');
  });

  it('of a spec filling some parts names the parts left open', () => {
    const plan = buildPlan(parse('ninefold: 1\nservice: { name: bare }\n') as ServiceSpec, ROOT);
    const md = renderDocs(plan, 'md');
    expect(md).toMatch(/^# bare — Service Interface Specification$/m);
    expect(md).toContain('The specification defines 1 of them; for resources, states, endpoints,');
    expect(md).toContain('Purpose and behaviour of the service: not shown.');
  });

  const examples = readdirSync(join(ROOT, 'examples')).filter((name) =>
    existsSync(join(ROOT, 'examples', name, 'service.yaml')),
  );
  it.each(examples)('of examples/%s matches its snapshot', async (name) => {
    const md = await docsOf(join(ROOT, 'examples', name, 'service.yaml'));
    await expect(md).toMatchFileSnapshot(`__snapshots__/docs-${name}.md`);
  });
});

describe('the HTML page', () => {
  it('escapes everything the spec says', () => {
    const spec = parse(FULL_SPEC) as ServiceSpec;
    const html = renderDocs(
      buildPlan({ ...spec, service: { name: 'x', title: '<script>alert(1)</script>' } }, ROOT),
      'html',
    );
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it.skipIf(!existsSync(CHROMIUM))('renders the nine parts and the state diagram in a browser', async () => {
    const { chromium } = await import('playwright-core');
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    const file = join(ROOT, '.tmp/docs.html');
    writeFileSync(file, await docsOf(join(ROOT, 'examples/orders/service.yaml'), 'html'));
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(pathToFileURL(file).href);
      for (const h of HEADINGS)
        await expect(page.locator('main h2', { hasText: h }).first().isVisible()).resolves.toBe(true);
      expect(await page.locator('main h2').allTextContents()).toEqual(HEADINGS);
      expect(await page.locator('nav a').allTextContents()).toEqual(HEADINGS);
      await page.locator('pre.mermaid svg').first().waitFor({ state: 'visible', timeout: 15_000 });
      expect(await page.locator('pre.mermaid svg g.node, pre.mermaid svg g[id*="state-"]').count()).toBeGreaterThan(0);
      expect(errors).toEqual([]);
      await page.screenshot({ path: join(ROOT, '.tmp/docs.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});

// dist/ is built once by test/global-setup.ts.
describe('ninefold docs', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [join(ROOT, 'bin/ninefold.js'), 'docs', ...args], { cwd: ROOT, encoding: 'utf8' });

  it('prints the seed document for the empty spec', () => {
    const run = cli('examples/empty/service.yaml');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(normalise(run.stdout)).toBe(normalise(readFileSync(SEED, 'utf8')));
  });

  it('writes HTML to --out', () => {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    const out = join(ROOT, '.tmp/cli-docs.html');
    const run = cli('examples/empty/service.yaml', '--format', 'html', '--out', out);
    expect(run.status).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('<h2>Versioning</h2>');
  });

  it('prints the diagnostics of a spec with errors and exits 1', () => {
    const run = cli('test/fixtures/ten-mistakes.yaml');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/ten-mistakes\.yaml:\d+:\d+ {2}error/);
    expect(run.stdout).toBe('');
  });
});
