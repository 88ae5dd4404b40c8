// The floor of a refusal: node:http alone answering every request with the 429 Ninefold sends over a rate limit
// (the same status, headers and body size, a fresh request id each time), with no routing, no counter and no
// decision. bench/run.mjs's line `raw-refused` runs it beside `nf-get-refused`, so the refusal's cost can be read
// against what Node's HTTP server itself costs. env: PORT; BATCH=1 writes the answers of one turn of the event loop
// together at its end, as Ninefold does (src/runtime/answer-turn.ts): the line `raw-refused-turn`.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

const PORT = Number(process.env.PORT ?? 18224);
const BATCH = process.env.BATCH === '1';
let held = [];
let bodies = [];
const flush = () => {
  const due = held;
  const texts = bodies;
  held = [];
  bodies = [];
  for (let i = 0; i < due.length; i++) due[i].end(texts[i]);
};
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
  if (!BATCH) return void res.end(body);
  if (held.push(res) === 1) setImmediate(flush);
  bodies.push(body);
}).listen(PORT, '127.0.0.1');
