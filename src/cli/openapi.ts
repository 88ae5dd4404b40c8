import { documentCommand } from './document-command.ts';

export const openapiCommand = documentCommand(
  'openapi',
  'write the OpenAPI 3.1 document (JSON or YAML)',
  async () => (await import('../emit/openapi.ts')).buildOpenApi,
);
