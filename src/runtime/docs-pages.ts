import type { FastifyInstance, FastifyRequest } from 'fastify';
import { buildAsyncApi } from '../emit/asyncapi.ts';
import { renderDocs } from '../emit/index.ts';
import { buildOpenApi } from '../emit/openapi.ts';
import type { Plan } from '../plan/types.ts';

/**
 * /openapi.json, /asyncapi.json (the events), the API reference at /docs (Scalar, its script served from its
 * npm package; no CDN, no web fonts, no AI or MCP widgets) and the nine-part document at /docs/spec.
 */
export const registerDocsPages = async (
  app: FastifyInstance,
  plan: Plan,
  guards: { openapi?: Guard; docs?: Guard } = {},
) => {
  const document = buildOpenApi(plan);
  const text = JSON.stringify(document);
  const asyncText = JSON.stringify(buildAsyncApi(plan));
  const specPage = renderDocs(plan, 'html');
  app.get('/openapi.json', guards.openapi ? { onRequest: guards.openapi } : {}, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(text),
  );
  app.get('/asyncapi.json', guards.openapi ? { onRequest: guards.openapi } : {}, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(asyncText),
  );
  // The docs pages live in their own context, so that a guard (auth.public without docs) covers Scalar's routes.
  // With a guard (auth.public without docs), the docs pages get their own context so the guard covers Scalar's
  // routes. Without one they go on the root: the child context costs every other route about a tenth of its
  // throughput (measured on GET by id).
  const guard = guards.docs;
  if (!guard) return registerReference(app, plan, document, specPage);
  await app.register(async (docs) => {
    docs.addHook('onRequest', guard);
    await registerReference(docs, plan, document, specPage);
  });
};

/** Throws the catalogued 401/403 when the caller may not see a built-in page. */
type Guard = (request: FastifyRequest) => Promise<void>;

const registerReference = async (
  app: FastifyInstance,
  plan: Plan,
  document: Record<string, unknown>,
  specPage: string,
) => {
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
