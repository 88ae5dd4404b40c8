import { createHash, randomBytes } from 'node:crypto';
import { buildAsyncApi } from '../emit/asyncapi.ts';
import { renderDocs } from '../emit/index.ts';
import { buildOpenApi } from '../emit/openapi.ts';
import type { ServerPart } from './part.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

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

/**
 * The built-in pages: /openapi.json, /asyncapi.json (the events), the API reference at /docs (Scalar, its script
 * served from its npm package; no CDN, no web fonts, no AI or MCP widgets) and the nine-part document at
 * /docs/spec. Each is a route like any other: public unless `auth.public` leaves its page out.
 */
export const docsPart: ServerPart = {
  name: 'docs',
  install(host) {
    const { plan } = host;
    const document = buildOpenApi(plan);
    const openapiText = JSON.stringify(document);
    const asyncText = JSON.stringify(buildAsyncApi(plan));
    const specPage = renderDocs(plan, 'html');
    const specHeaders = pageHeaders(inlineScripts(specPage).map(sha256));
    const text = (
      path: string,
      operation: string,
      page: 'openapi' | 'docs',
      headers: Record<string, string>,
      body: string,
    ) =>
      host.route({
        method: 'GET',
        path,
        root: true,
        operation,
        kind: { action: operation, builtIn: page },
        body: 'none',
        handler: async () => ({ status: 200, headers, body }),
      });
    text('/openapi.json', 'openapi', 'openapi', { 'content-type': JSON_TYPE }, openapiText);
    text('/asyncapi.json', 'asyncapi', 'openapi', { 'content-type': JSON_TYPE }, asyncText);
    text('/docs/spec', 'docs.spec', 'docs', specHeaders, specPage);

    // The reference page is Scalar's plugin; its routes get the same before-body steps as every route, and the
    // page's inline scripts carry a nonce drawn once per server.
    const nonce = randomBytes(16).toString('base64');
    const guard = host.beforeBody({ action: 'docs', builtIn: 'docs' }, 'docs.reference');
    const headers = pageHeaders([`'nonce-${nonce}'`]);
    host.mount(async (app) => {
      const { default: scalar } = await import('@scalar/fastify-api-reference');
      await app.register(scalar, {
        routePrefix: '/docs',
        configuration: {
          content: document,
          title: plan.service.title,
          withDefaultFonts: false,
          showDeveloperTools: 'never',
          agent: { disabled: true },
          mcp: { disabled: true },
          nonce,
        },
        hooks: {
          onRequest: async (request, reply) => {
            reply.headers(headers);
            await guard(request, reply);
          },
        },
        logLevel: 'warn',
      });
    });
  },
};
