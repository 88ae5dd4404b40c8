import type { OpenApiObject } from '../openapi-model.ts';
import type { SchemeSpec } from './scheme-types.ts';

/** How a scheme's credential is sent, in words: the docs, the OpenAPI and AsyncAPI descriptions say the same. */
export const credentialWords = (s: SchemeSpec, keyPrefix: string): string | undefined => {
  if (s.type === 'apiKey') {
    const key = `An API key (${keyPrefix}…)`;
    if (s.in === 'bearer') return `${key} as the bearer token: \`Authorization: Bearer ${keyPrefix}…\`.`;
    if (s.in === 'basic') return `${key} as the Basic user name, with an empty password (\`${keyPrefix}…:\`).`;
    return `${key} in the ${s.in ?? 'header'} ${s.name ?? 'X-Api-Key'}.`;
  }
  if ((s.type === 'bearer' || s.type === 'oidc') && s.scheme && s.scheme.toLowerCase() !== 'bearer')
    return `A JWT sent as \`Authorization: ${s.scheme} <jwt>\` (not Bearer).`;
  return undefined;
};

/**
 * One scheme as an OpenAPI (or AsyncAPI, `httpApiKey`) security scheme, exactly as the server accepts it: a key in
 * Authorization is http bearer or basic; a JWT under another word than Bearer is an apiKey in the Authorization
 * header, since OpenAPI's http schemes take only registered words.
 */
export const securitySchemeOf = (s: SchemeSpec, keyPrefix: string, apiKeyType = 'apiKey'): OpenApiObject => {
  const words = credentialWords(s, keyPrefix);
  const description = {
    ...(s.description || words ? { description: [s.description, words].filter(Boolean).join(' ') } : {}),
  };
  if (s.type === 'apiKey') {
    if (s.in === 'bearer') return { type: 'http', scheme: 'bearer', ...description };
    if (s.in === 'basic') return { type: 'http', scheme: 'basic', ...description };
    return { type: apiKeyType, in: s.in ?? 'header', name: s.name ?? 'X-Api-Key', ...description };
  }
  if (s.type === 'basic') return { type: 'http', scheme: 'basic', ...description };
  if (s.scheme && s.scheme.toLowerCase() !== 'bearer')
    return { type: apiKeyType, in: 'header', name: 'Authorization', ...description };
  return { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', ...description };
};
