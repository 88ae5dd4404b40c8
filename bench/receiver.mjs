// Webhook receiver for the bench: answers 200 at once and records, per event, when it arrived (latency = arrival -
// the event's own time, in ms). Control, on the same port: GET /stats → {count, first, last, p50, p99} since the
// last POST /reset. Run: node bench/receiver.mjs <port>
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18400);
let latencies = [];
let first = 0;
let last = 0;
const stats = () => {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null;
  return { count: sorted.length, first, last, p50: at(0.5), p99: at(0.99) };
};
const server = createServer((req, res) => {
  if (req.url === '/stats') return res.writeHead(200).end(JSON.stringify(stats()));
  if (req.url === '/reset') {
    latencies = [];
    first = 0;
    last = 0;
    return res.writeHead(204).end();
  }
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
process.on('SIGTERM', () => process.exit(0));
