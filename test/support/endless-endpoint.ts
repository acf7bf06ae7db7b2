import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** Most bytes the endless endpoint sends on one connection before it ends the answer itself, so no test can hang on it. */
export const ENDLESS_ENDPOINT_LIMIT_BYTES = 64 * 1024 * 1024;

/** What the endless endpoint saw of one request. */
export interface EndlessAnswer {
  method: string;
  path: string;
  /** Bytes of body it had written when the connection closed (or it stopped at {@link ENDLESS_ENDPOINT_LIMIT_BYTES}). */
  written: number;
  /** True when the client closed the connection before the endpoint stopped on its own. */
  closedByClient: boolean;
}

/**
 * A customer endpoint on 127.0.0.1 that answers every request (an S3 `PutObject`, a presigned `PUT`)
 * with `200` and a body that never ends: 64 KiB chunks as fast as the client reads them (it waits for
 * `drain`, so what it wrote is what the client took, plus the sockets' buffers), up to
 * {@link ENDLESS_ENDPOINT_LIMIT_BYTES}. `answers` settle as each connection closes.
 */
export async function startEndlessEndpoint(): Promise<{ url: string; answers: Promise<EndlessAnswer>[]; close(): Promise<void> }> {
  const answers: Promise<EndlessAnswer>[] = [];
  const chunk = Buffer.alloc(64 * 1024, '<');
  const server: Server = createServer((req, res) => {
    req.resume();
    answers.push(
      new Promise<EndlessAnswer>((resolve) => {
        const answer: EndlessAnswer = { method: req.method ?? '', path: req.url ?? '', written: 0, closedByClient: false };
        let done = false;
        res.writeHead(200, { 'content-type': 'application/xml', etag: '"endless"' });
        const pump = () => {
          while (!done && answer.written < ENDLESS_ENDPOINT_LIMIT_BYTES) {
            answer.written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!done) {
            done = true;
            res.end();
            resolve(answer);
          }
        };
        res.once('close', () => {
          if (done) return;
          done = true;
          answer.closedByClient = true;
          resolve(answer);
        });
        pump();
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answers,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
