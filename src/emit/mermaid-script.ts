import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

let cached: string | undefined;

/**
 * The Mermaid browser bundle, read once and made safe to inline in a <script> element: the HTML page must
 * render its diagrams offline, so it cannot load Mermaid from a CDN.
 */
export const mermaidScript = (): string => {
  cached ??= readFileSync(createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js'), 'utf8').replace(
    /<\/script/gi,
    '<\\/script',
  );
  return cached;
};
