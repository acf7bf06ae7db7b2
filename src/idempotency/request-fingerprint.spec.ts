import type { Request } from 'express';
import { requestFingerprint } from './request-fingerprint';

/** A parsed request as the fingerprint sees it: body, optional multer files, content type. */
function req(parts: { body?: unknown; file?: unknown; files?: unknown; multipart?: boolean }): Request {
  return { ...parts, is: (type: string) => (parts.multipart && type === 'multipart/form-data' ? type : false) } as unknown as Request;
}

describe('requestFingerprint', () => {
  it('is the same for the same JSON body in another key order, and differs for another body', () => {
    const a = requestFingerprint(req({ body: { url: 'https://example.com', width: 800 } }));
    expect(requestFingerprint(req({ body: { width: 800, url: 'https://example.com' } }))).toBe(a);
    expect(requestFingerprint(req({ body: { url: 'https://example.com', width: 801 } }))).not.toBe(a);
    expect(requestFingerprint(req({ body: { url: 'https://example.com' } }))).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('covers the form fields and the content of uploaded files (multer memory storage)', () => {
    const fields = Object.assign(Object.create(null), { width: '800' });
    const upload = (content: string) =>
      requestFingerprint(req({ multipart: true, body: fields, file: { fieldname: 'file', buffer: Buffer.from(content) } }));
    expect(upload('<html>one</html>')).toBe(upload('<html>one</html>'));
    expect(upload('<html>one</html>')).not.toBe(upload('<html>two</html>'));
    const asArray = requestFingerprint(
      req({ multipart: true, body: fields, files: [{ fieldname: 'file', buffer: Buffer.from('<html>one</html>') }] }),
    );
    expect(asArray).toBe(upload('<html>one</html>'));
    const otherFields = requestFingerprint(
      req({ multipart: true, body: { width: '900' }, file: { fieldname: 'file', buffer: Buffer.from('<html>one</html>') } }),
    );
    expect(otherFields).not.toBe(upload('<html>one</html>'));
  });

  it('refuses a multipart request whose body was not parsed yet, and files without a buffer', () => {
    expect(() => requestFingerprint(req({ multipart: true }))).toThrow(/upload interceptor below @Idempotent/);
    expect(() => requestFingerprint(req({ multipart: true, body: {}, file: { fieldname: 'file', path: '/tmp/x' } }))).toThrow(
      /memory storage/,
    );
  });
});
