import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export type PageHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A page server on 127.0.0.1 (ephemeral port) serving the test's own pages. */
export interface PageServer {
  /** e.g. `http://127.0.0.1:40125` */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves `routes` (path → HTML string or handler); other paths are 404. */
export async function startPageServer(routes: Record<string, string | PageHandler>): Promise<PageServer> {
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
