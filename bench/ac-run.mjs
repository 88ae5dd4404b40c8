// Fallback load generator when wrk is missing: autocannon with the same env contract as bench/wrk-ids.lua.
// usage: node bench/ac-run.mjs BASE_URL DURATION_S CONNECTIONS ; prints wrk-like lines for run.mjs's parser.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const [base, dur, conns] = process.argv.slice(2);
const tpl = process.env.WRK_PATH ?? '/';
const method = process.env.WRK_METHOD ?? 'GET';
const body = process.env.WRK_BODY || undefined;
const priceMax = Number(process.env.WRK_PRICE_MAX ?? 990);
const ids = tpl.includes('{id}') ? readFileSync(process.env.WRK_IDS, 'utf8').split('\n').filter(Boolean) : [];
const pick = (a) => a[Math.floor(Math.random() * a.length)];
// WRK_SEQ_START: ids in order from that request on, then a second pass with WRK_PATH2 (as in bench/wrk-ids.lua).
let seq = process.env.WRK_SEQ_START ? Number(process.env.WRK_SEQ_START) : undefined;
const nextPath = () => {
  if (seq === undefined) return tpl.replace('{id}', () => pick(ids));
  const pass = Math.floor(seq / ids.length);
  const id = ids[seq % ids.length];
  seq++;
  return (pass === 0 ? tpl : (process.env.WRK_PATH2 ?? tpl)).replace('{id}', id);
};
const r = await autocannon({
  url: base,
  connections: Number(conns),
  duration: Number(dur),
  requests: [
    {
      method,
      body,
      headers: {
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(process.env.WRK_HEADER
          ? { [process.env.WRK_HEADER.split(':')[0]]: process.env.WRK_HEADER.split(':').slice(1).join(':').trim() }
          : {}),
      },
      setupRequest: (req) => ({
        ...req,
        path: nextPath().replace('{price}', () => String(Math.floor(Math.random() * (priceMax + 1)))),
      }),
    },
  ],
});
console.log(`  ${r.requests.total} requests in ${dur}s`);
console.log(`     99%   ${r.latency.p99}ms`);
console.log(`Requests/sec: ${r.requests.average}`);
if (r.non2xx) console.log(`  Non-2xx or 3xx responses: ${r.non2xx}`);
console.log(`  Socket errors: connect 0, read 0, write ${r.errors}, timeout ${r.timeouts}`);
