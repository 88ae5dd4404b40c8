import { documentCommand } from './document-command.ts';

export const asyncapiCommand = documentCommand(
  'asyncapi',
  'write the AsyncAPI 3.0 document of the events (JSON or YAML)',
  async () => (await import('../emit/asyncapi.ts')).buildAsyncApi,
);
