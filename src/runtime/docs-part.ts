import { createHash, randomBytes } from 'node:crypto';
import type { Plan } from '../plan/types.ts';
import { cachedPage, type PageText } from './cached-page.ts';
import type { HandlerInput, HandlerOutput } from './context.ts';
import type { ServerPart } from './part.ts';
import { loadScalarAssets } from './scalar-assets.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';
const SCRIPT_TYPE = 'text/javascript; charset=utf-8';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const inlineScripts = (html: string) => [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');

/**
 * The headers of a page a browser renders: no framing by other sites, no sniffing, and a Content-Security-Policy
 * that runs only the page's own scripts (by hash, or by a nonce drawn when the server starts) and talks only to
 * this origin. Styles may be inline: the diagrams and the reference page inject theirs at run time.
 */
const pageHeaders = (scriptSources: readonly string[]) => ({
  'content-type': HTML_TYPE,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': [
    "default-src 'none'",
    `script-src 'self' ${scriptSources.join(' ')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
});

/** Gives every <script> of a page the nonce its CSP allows (the plugin's page leaves them without one). */
const withNonce = (html: string, nonce: string) =>
  html.replace(/<script(?![^>]*\snonce=)(?=[\s>])/g, `<script nonce="${nonce}"`);

/** The documents, each rendered when first asked for: the emitters and the Mermaid bundle load only then. */
const openapiText = async (plan: Plan): Promise<PageText> => {
  const { buildOpenApi } = await import('../emit/openapi.ts');
  return { text: JSON.stringify(buildOpenApi(plan)), headers: { 'content-type': JSON_TYPE } };
};
const versionText = async (plan: Plan, id: string): Promise<PageText> => {
  const { buildOpenApiAt } = await import('../emit/versioned.ts');
  return { text: JSON.stringify(buildOpenApiAt(plan, id)), headers: { 'content-type': JSON_TYPE } };
};
const asyncapiText = async (plan: Plan): Promise<PageText> => {
  const { buildAsyncApi } = await import('../emit/asyncapi.ts');
  return { text: JSON.stringify(buildAsyncApi(plan)), headers: { 'content-type': JSON_TYPE } };
};
const asyncapiVersionText = async (plan: Plan, id: string): Promise<PageText> => {
  const { buildAsyncApiAt } = await import('../emit/versioned.ts');
  return { text: JSON.stringify(buildAsyncApiAt(plan, id)), headers: { 'content-type': JSON_TYPE } };
};
const specPage = async (plan: Plan): Promise<PageText> => {
  const { renderDocs } = await import('../emit/index.ts');
  const text = renderDocs(plan, 'html');
  return { text, headers: pageHeaders(inlineScripts(text).map(sha256)) };
};

/**
 * The built-in pages: /openapi.json, /asyncapi.json (the events), the API reference at /docs (Scalar, its script
 * served from its npm package; no CDN, no web fonts, no AI or MCP widgets) and the nine-part document at
 * /docs/spec. Each is a route like any other (public unless `auth.public` leaves its page out), rendered on its
 * first request, then kept compressed with an ETag (cached-page.ts): none of them costs start-up time or memory
 * until someone reads it.
 */
export const docsPart: ServerPart = {
  name: 'docs',
  install(host) {
    const { plan } = host;
    const page = (
      path: string,
      operation: string,
      builtIn: 'openapi' | 'docs',
      handler: (input: HandlerInput) => Promise<HandlerOutput>,
    ) =>
      host.route({
        method: 'GET',
        path,
        root: true,
        operation,
        kind: { action: operation, builtIn },
        body: 'none',
        handler,
      });
    const openapi = cachedPage(() => openapiText(plan));
    page('/openapi.json', 'openapi', 'openapi', openapi);
    // One document per declared version, newest first: the reference page offers each (Scalar's sources).
    const versions = [...(plan.versioning?.ids ?? [])].reverse().map((id) => ({
      id,
      file: `openapi/${encodeURIComponent(id)}.json`,
      handler: cachedPage(() => versionText(plan, id)),
    }));
    for (const v of versions) page(`/${v.file}`, 'openapi', 'openapi', v.handler);
    page(
      '/asyncapi.json',
      'asyncapi',
      'openapi',
      cachedPage(() => asyncapiText(plan)),
    );
    for (const id of plan.versioning?.ids ?? [])
      page(
        `/asyncapi/${encodeURIComponent(id)}.json`,
        'asyncapi',
        'openapi',
        cachedPage(() => asyncapiVersionText(plan, id)),
      );
    page(
      '/docs/spec',
      'docs.spec',
      'docs',
      cachedPage(() => specPage(plan)),
    );

    // The reference page's inline scripts carry a nonce drawn once per server. Its document is served under
    // /docs too, so that the page works wherever /docs is public, whatever `auth.public` says of /openapi.json.
    const nonce = randomBytes(16).toString('base64');
    let scalar: ReturnType<typeof loadScalarAssets> | undefined;
    const assets = () => {
      // The plugin wants a document to start with; the page it renders reads ./openapi.json, served below.
      const sources = versions.map((v) => ({ title: `API version ${v.id}`, slug: v.id, url: `./${v.file}` }));
      scalar ??= loadScalarAssets({
        ...(sources.length
          ? { sources }
          : { content: { openapi: '3.1.0', info: { title: plan.service.title, version: '' }, paths: {} } }),
        pageTitle: plan.service.title,
        withDefaultFonts: false,
        showDeveloperTools: 'never',
        agent: { disabled: true },
        mcp: { disabled: true },
        nonce,
      });
      return scalar;
    };
    const redirect = async (): Promise<HandlerOutput> => ({ status: 301, headers: { location: '/docs/' } });
    page('/docs', 'docs.reference', 'docs', redirect);
    const reference = async () => ({
      text: withNonce((await assets()).page, nonce),
      headers: pageHeaders([`'nonce-${nonce}'`]),
    });
    page('/docs/', 'docs.reference', 'docs', cachedPage(reference));
    const script = async () => ({ text: (await assets()).script, headers: { 'content-type': SCRIPT_TYPE } });
    page('/docs/js/scalar.js', 'docs.reference', 'docs', cachedPage(script));
    page('/docs/openapi.json', 'docs.reference', 'docs', openapi);
    for (const v of versions) page(`/docs/${v.file}`, 'docs.reference', 'docs', v.handler);
  },
};
