import { documentCommand } from './document-command.ts';

export const asyncapiCommand = documentCommand(
  'asyncapi',
  'write the AsyncAPI 3.0 document of the events (JSON or YAML)',
  async () => {
    const [{ buildAsyncApi }, { buildAsyncApiAt }] = await Promise.all([
      import('../emit/asyncapi.ts'),
      import('../emit/versioned.ts'),
    ]);
    return (plan, version) => (version ? buildAsyncApiAt(plan, version) : buildAsyncApi(plan));
  },
  true,
);
