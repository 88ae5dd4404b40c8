// The floor of a refusal: node:http alone answering every request with the 429 Ninefold sends over a rate limit
// (the same status, headers and body size, a fresh request id each time), with no routing, no counter and no
// decision. bench/run.mjs's line `raw-refused` runs it beside `nf-get-refused`, so the refusal's cost can be read
// against what Node's HTTP server itself costs. env: PORT.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const PORT = Number(process.env.PORT ?? 18224);
const problem = (path) =>
  JSON.stringify({
    type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
    title: 'The caller is over a rate limit; retry after the time given',
    status: 429,
    code: 'rate_limited',
    detail: 'Over the rate limit (default); retry after the time given.',
    instance: path,
    'violated-policies': ['default'],
  });

createServer((req, res) => {
  const body = problem(req.url);
  res.writeHead(429, {
    'x-request-id': randomUUID(),
    'x-content-type-options': 'nosniff',
    'ratelimit-policy': '"default";q=1;w=86400',
    ratelimit: '"default";r=0;t=86400',
    'retry-after': '86400',
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}).listen(PORT, '127.0.0.1');
