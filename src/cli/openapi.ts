import { documentCommand } from './document-command.ts';

export const openapiCommand = documentCommand(
  'openapi',
  'write the OpenAPI 3.1 document (JSON or YAML)',
  async () => {
    const { buildOpenApiAt, buildOpenApiNewest } = await import('../emit/versioned.ts');
    return (plan, version) => (version ? buildOpenApiAt(plan, version) : buildOpenApiNewest(plan));
  },
  true,
);
