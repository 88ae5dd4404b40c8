import Fastify from 'fastify';
import { importExternal } from './import-external.ts';

export interface ScalarAssets {
  /** The reference page's HTML: it loads `js/scalar.js` and `./openapi.json`, relative to /docs/. */
  readonly page: string;
  /** Scalar's browser bundle (about 4 MB). */
  readonly script: string;
}

/**
 * The API reference page and its script, as Scalar's Fastify plugin serves them, taken from a throwaway Fastify
 * instance through `inject`: the plugin holds its 4 MB script in its module, so it is loaded only when the reference
 * is first asked for, and its answers are kept (compressed) by the docs part, not the plugin's routes.
 */
export const loadScalarAssets = async (configuration: Record<string, unknown>): Promise<ScalarAssets> => {
  const { default: scalar } = (await importExternal(
    '@scalar/fastify-api-reference',
  )) as typeof import('@scalar/fastify-api-reference');
  const app = Fastify({ logger: false });
  try {
    await app.register(scalar, { routePrefix: '/reference', configuration });
    const [page, script] = await Promise.all([app.inject('/reference/'), app.inject('/reference/js/scalar.js')]);
    if (page.statusCode !== 200 || script.statusCode !== 200) throw new Error('the API reference plugin failed');
    return { page: page.body, script: script.body };
  } finally {
    await app.close();
  }
};
