import { resolve } from 'node:path';
import { importModule } from '../../spec/import-module.ts';

/** What a transform sees besides the body: the resource, and for a request the write it is part of. */
export interface TransformContext {
  readonly resource: string;
  readonly action?: 'create' | 'update' | 'replace';
}

/**
 * A version's transform module (`{resource, transform: ./versions/2026-09-01.ts}`): `request` turns a body of the
 * version before it into one of its own, `answer` a record of its own into one of the version before. Either may
 * change the record in place or return a new one.
 */
export interface TransformModule {
  readonly request?: (body: Record<string, unknown>, ctx: TransformContext) => unknown;
  readonly answer?: (body: Record<string, unknown>, ctx: TransformContext) => unknown;
}

/** Module path as the spec writes it → the loaded module; filled at start-up, read by the shifts. */
export type TransformModules = Map<string, TransformModule>;

/** Loads every transform module the spec names, the way custom handlers are loaded (relative to the spec). */
export const loadTransforms = async (dir: string, paths: Iterable<string>, into: TransformModules): Promise<void> => {
  for (const path of new Set(paths)) {
    if (into.has(path)) continue;
    const mod = await importModule(resolve(dir, path));
    const request = mod.request;
    const answer = mod.answer;
    if (typeof request !== 'function' && typeof answer !== 'function')
      throw new Error(`${path} exports neither request nor answer`);
    into.set(path, {
      ...(typeof request === 'function' ? { request: request as TransformModule['request'] } : {}),
      ...(typeof answer === 'function' ? { answer: answer as TransformModule['answer'] } : {}),
    });
  }
};
