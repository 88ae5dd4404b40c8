/**
 * `import()` of what lives outside Ninefold's own code: a package (`pg`, Scalar's plugin) or a user's file (a handler,
 * a transform, a TypeScript spec). The command-line bundle (scripts/bundle-cli.mjs) swaps this module for one that
 * asks bin/ninefold.js to do the import: the bundle runs as a script compiled with V8's code cache, and such a script
 * cannot call `import()` itself on Node 20.
 */
export const importExternal = (specifier: string): Promise<Record<string, unknown>> =>
  import(specifier) as Promise<Record<string, unknown>>;
