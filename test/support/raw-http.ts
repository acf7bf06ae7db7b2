import { request } from 'node:http';

/** The answer to a {@link rawRequest}: `body` is parsed JSON when it parses, else the text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/**
 * Sends exactly the given method, path (not normalised: bad percent-encodings stay as they are),
 * headers and body bytes to `baseUrl`, which fetch cannot do. Rejects after `timeoutMs` (a hang is a
 * failure, not a slow test).
 */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: Buffer | string; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
  const headers: Record<string, string | number> = { ...(options.headers ?? {}) };
  if (body) headers['content-length'] = body.length;
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, method, path, headers, timeout: options.timeoutMs ?? 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${options.timeoutMs ?? 15_000} ms`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      // The server may answer (413) and close before the whole body is written.
      if (err.code === 'EPIPE' || err.code === 'ECONNRESET') return;
      reject(err);
    });
    req.end(body);
  });
}

/** A multipart/form-data body from fields (name, value) in order; `file` parts carry a file name and type. */
export function multipartBody(parts: Array<{ name: string; value: Buffer | string; filename?: string; contentType?: string }>): {
  body: Buffer;
  contentType: string;
} {
  const boundary = `----glimpse${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.contentType) head += `Content-Type: ${part.contentType}\r\n`;
    chunks.push(
      Buffer.from(`${head}\r\n`, 'utf8'),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value, 'utf8'),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
