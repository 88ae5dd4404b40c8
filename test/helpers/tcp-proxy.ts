import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/** A loopback TCP proxy to one target: the network between a service and its database, which a test can cut. */
export interface TcpProxy {
  readonly port: number;
  /** Resets every connection through it and every new one, until `restore` (the server stays up for others). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export const startTcpProxy = async (targetHost: string, targetPort: number): Promise<TcpProxy> => {
  const open = new Set<Socket>();
  let cutOff = false;
  const server = createServer((client) => {
    if (cutOff) return void client.resetAndDestroy();
    const upstream = connect(targetPort, targetHost);
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      open.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        open.delete(socket);
        other.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      cutOff = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    restore() {
      cutOff = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
};
