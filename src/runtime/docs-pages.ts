import type { FastifyInstance } from 'fastify';
import { renderDocs } from '../emit/index.ts';
import { buildOpenApi } from '../emit/openapi.ts';
import type { Plan } from '../plan/types.ts';

/**
 * /openapi.json, the API reference at /docs (Scalar, its script served from its npm package; no CDN,
 * no web fonts, no AI or MCP widgets) and the nine-part document at /docs/spec.
 */
export const registerDocsPages = async (app: FastifyInstance, plan: Plan) => {
  const document = buildOpenApi(plan);
  const text = JSON.stringify(document);
  const specPage = renderDocs(plan, 'html');
  app.get('/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(text));
  app.get('/docs/spec', async (_request, reply) => reply.type('text/html; charset=utf-8').send(specPage));
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
    },
    logLevel: 'warn',
  });
};
