import v8 from 'node:v8';
import { main } from '../dist/cli-bundle/ninefold.js';
setTimeout(() => { const m = process.memoryUsage(); console.error(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, (v / 1048576).toFixed(1)]))); console.error(v8.getHeapSpaceStatistics().map((s) => `${s.space_name} ${(s.space_size / 1048576).toFixed(1)}/${(s.space_used_size / 1048576).toFixed(1)}`).join(' | ')); process.exit(0); }, 2500);
process.exitCode = await main(process.argv.slice(2));
