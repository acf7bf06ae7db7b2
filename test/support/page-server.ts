import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export type PageHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A page server on a loopback address (ephemeral port) serving the test's own pages. */
export interface PageServer {
  /** e.g. `http://127.0.0.1:40125` */
  url: string;
  port: number;
  /** TCP connections accepted so far (every request, upgrade or probe opens or reuses one). */
  connections(): number;
  server: Server;
  close(): Promise<void>;
}

/**
 * Serves `routes` (path → HTML string or handler); other paths are 404. Binds `host`, a loopback
 * address (default 127.0.0.1; Linux answers on all of 127.0.0.0/8, e.g. 127.0.0.2).
 */
export async function startPageServer(routes: Record<string, string | PageHandler>, host = '127.0.0.1'): Promise<PageServer> {
  if (!host.startsWith('127.')) throw new Error('test page servers bind loopback addresses only');
  const server = createServer((req, res) => {
    const route = routes[(req.url ?? '/').split('?')[0]];
    if (route === undefined) {
      res.writeHead(404).end('not found');
    } else if (typeof route === 'string') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(route);
    } else {
      route(req, res);
    }
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    connections: () => connections,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
