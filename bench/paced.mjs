// Creates records at a steady rate (not as fast as possible): node bench/paced.mjs <url> <per-second> <seconds> <json>
// Used for commit-to-receipt latency of webhooks at a load the server carries with room to spare.
const [url, rateText, secondsText, body] = process.argv.slice(2);
const rate = Number(rateText);
const total = Math.round(rate * Number(secondsText));
const start = performance.now();
let sent = 0;
let failed = 0;
const inFlight = new Set();
while (sent < total) {
  const due = start + (sent * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((ok) => setTimeout(ok, wait));
  const p = fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    .then(async (r) => {
      await r.arrayBuffer();
      if (r.status !== 201) failed++;
    })
    .catch(() => failed++)
    .finally(() => inFlight.delete(p));
  inFlight.add(p);
  sent++;
}
await Promise.all(inFlight);
process.stdout.write(JSON.stringify({ sent, failed, seconds: (performance.now() - start) / 1000 }));
