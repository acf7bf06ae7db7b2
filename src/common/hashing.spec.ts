import { sha256Bytes, sha256Hex } from './hashing';

describe('sha256Hex and sha256Bytes', () => {
  it('hash a string as its UTF-8 bytes, the same as the Buffer of those bytes', () => {
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(Buffer.from('abc'))).toBe(sha256Hex('abc'));
    expect(sha256Hex('é')).toBe(sha256Hex(Buffer.from([0xc3, 0xa9])));
  });

  it('give the raw 32 bytes of the same digest', () => {
    expect(sha256Bytes('abc')).toHaveLength(32);
    expect(sha256Bytes('abc').toString('hex')).toBe(sha256Hex('abc'));
  });
});
