// Webhook receiver for the bench: answers 200 at once, records when each event arrived, and on SIGTERM writes
// {count, first, last, p50, p99} (latency = arrival - the event's own time, in ms) to the file in argv[3].
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18400);
const out = process.argv[3] ?? 'receiver.json';
const latencies = [];
let first = 0;
let last = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    first ||= now;
    last = now;
    try {
      latencies.push(now - Date.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')).time));
    } catch {}
    res.writeHead(200).end();
  });
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null;
  writeFileSync(out, JSON.stringify({ count: sorted.length, first, last, p50: at(0.5), p99: at(0.99) }));
  process.exit(0);
});
