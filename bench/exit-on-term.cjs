// Preloaded by bench/pg-cpu.mjs under PROF: a server without a SIGTERM handler exits normally, so --cpu-prof writes.
process.on('SIGTERM', () => process.exit(0));
