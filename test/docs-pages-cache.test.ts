import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Served, serveSpec } from './helpers/serve-spec.ts';

const SPEC = `
ninefold: 1
service: { name: pages, title: Pages }
resources:
  Note:
    fields: { text: { type: string } }
    states:
      field: status
      initial: draft
      transitions: { publish: { from: draft, to: published } }
endpoints:
  Note: { operations: [list, get, create] }
`;

const PAGES = ['/docs/', '/docs/spec', '/docs/js/scalar.js', '/openapi.json', '/asyncapi.json', '/docs/openapi.json'];

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** A GET whose body arrives as sent (fetch would decode it): the test sees the encoding on the wire. */
const get = (base: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<RawAnswer>((done, fail) => {
    const req = request(new URL(path, base), { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', fail);
    req.end();
  });

describe('the built-in pages are compressed and cacheable', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serveSpec(SPEC);
  });
  afterAll(() => s.close({ remove: true }));

  it.each(PAGES)('%s: brotli or gzip when asked, the same text either way, identity otherwise', async (path) => {
    const plain = await get(s.url, path);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('accept-encoding');
    const br = await get(s.url, path, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    const gzip = await get(s.url, path, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plain.body.length);
    expect(new Set([plain.headers.etag, br.headers.etag, gzip.headers.etag]).size).toBe(3);
  });

  it.each(PAGES)('%s: an ETag, no-cache, and 304 without a body on If-None-Match', async (path) => {
    const first = await get(s.url, path, { 'accept-encoding': 'gzip' });
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers['cache-control']).toBe('no-cache');
    const again = await get(s.url, path, { 'accept-encoding': 'gzip', 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    const weak = await get(s.url, path, { 'if-none-match': `"other", W/${etag}` });
    expect(weak.status).toBe(304);
    const stale = await get(s.url, path, { 'if-none-match': '"not-this-one"' });
    expect(stale.status).toBe(200);
  });

  it('the reference page keeps its CSP: every script runs by the nonce the header names', async () => {
    const page = await get(s.url, '/docs/', { 'accept-encoding': 'br' });
    const html = brotliDecompressSync(page.body).toString('utf8');
    const nonce = /'nonce-([^']+)'/.exec(String(page.headers['content-security-policy']))?.[1];
    expect(nonce).toBeDefined();
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1] ?? '');
    expect(scripts.length).toBeGreaterThan(0);
    for (const attrs of scripts) expect(attrs).toContain(`nonce="${nonce}"`);
    expect(html).toContain('src="js/scalar.js"');
    expect(html).toContain('<title>Pages</title>');
  });

  it('/docs sends the browser to /docs/', async () => {
    const r = await get(s.url, '/docs');
    expect([r.status, r.headers.location]).toEqual([301, '/docs/']);
  });
});
