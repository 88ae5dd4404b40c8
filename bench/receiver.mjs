// Webhook receiver for the bench: checks each delivery's signature as a real receiver would (Standard Webhooks:
// HMAC-SHA256 of "webhook-id.webhook-timestamp.body" with a secret it was given; 401 when none matches; nothing is
// checked until a secret is given, as bench/pg-cpu.mjs uses it), answers 200,
// and records, per event, when it arrived (latency = arrival - the event's own time, in ms). Control, on the same
// port: POST /secret (body: a whsec_… secret; every secret given is accepted from then on), GET /stats →
// {count, first, last, p50, p99} since the last POST /reset, and, since the receiver started: unique (distinct
// webhook-ids accepted), dupes (accepted again: at-least-once), bad (refused: no valid signature).
// Run: node bench/receiver.mjs <port>
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 18400);
let latencies = [];
let first = 0;
let last = 0;
const keys = [];
const seen = new Set();
let dupes = 0;
let bad = 0;
const stats = () => {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null;
  return { count: sorted.length, first, last, p50: at(0.5), p99: at(0.99), unique: seen.size, dupes, bad };
};
/** Whether one of the `v1,` signatures in the header is the HMAC of this delivery under a secret given. */
const signed = (headers, body) => {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const given = String(headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  if (!keys.length) return true;
  if (!id || !timestamp || !given.length) return false;
  return keys.some((key) => {
    const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
    return given.some((g) => g.length === mac.length && timingSafeEqual(g, mac));
  });
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
    const body = Buffer.concat(chunks);
    if (req.url === '/secret') {
      keys.push(
        Buffer.from(
          body
            .toString('utf8')
            .trim()
            .replace(/^whsec_/, ''),
          'base64',
        ),
      );
      return res.writeHead(204).end();
    }
    if (!signed(req.headers, body)) {
      bad++;
      return res.writeHead(401).end();
    }
    const now = Date.now();
    first ||= now;
    last = now;
    const id = req.headers['webhook-id'];
    if (seen.has(id)) dupes++;
    else seen.add(id);
    try {
      latencies.push(now - Date.parse(JSON.parse(body.toString('utf8')).time));
    } catch {}
    res.writeHead(200).end();
  });
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
