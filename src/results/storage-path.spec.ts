import { besideObjectKey, DEFAULT_STORAGE_PATH, storageObjectKey, storagePathProblem, StoragePathValues } from './storage-path';

const values: StoragePathValues = {
  id: 'scr_abc',
  ext: 'png',
  createdAt: new Date('2026-11-20T23:59:59.999Z'),
  targetUrl: 'https://www.example.com:8443/a/b?c=d',
  accountId: 'acc_xyz',
};

describe('storage path template (CONTRACT.md, "Storage destinations")', () => {
  it('expands every placeholder: id, ext, UTC date, host without port, account id', () => {
    expect(storageObjectKey('', '{accountId}/{date}/{host}/{id}.{ext}', values)).toBe('acc_xyz/2026-11-20/www.example.com/scr_abc.png');
  });

  it('defaults to {id}.{ext} and puts the prefix first', () => {
    expect(storageObjectKey('shots/', DEFAULT_STORAGE_PATH, values)).toBe('shots/scr_abc.png');
  });

  it('uses the UTC day, not the local one', () => {
    expect(storageObjectKey('', '{date}', { ...values, createdAt: new Date('2026-01-01T00:30:00.000Z') })).toBe('2026-01-01');
  });

  it('names uploaded documents upload for {host}', () => {
    expect(storageObjectKey('', '{host}/{id}', { ...values, targetUrl: 'upload:0f1e' })).toBe('upload/scr_abc');
  });

  it('puts extracted files beside the image with their own extension', () => {
    expect(besideObjectKey('', 'a/{id}.{ext}', { ...values, ext: 'md' }, 'png')).toBe('a/scr_abc.md');
    expect(besideObjectKey('', 'a/{id}', { ...values, ext: 'md' }, 'png')).toBe('a/scr_abc.md');
  });

  it('refuses unknown placeholders, stray braces, a leading slash, control characters, and more than 512 characters', () => {
    expect(storagePathProblem('{id}.{ext}')).toBeNull();
    expect(storagePathProblem('{date}/{host}/{accountId}-{id}.{ext}')).toBeNull();
    expect(storagePathProblem('{name}.png')).toMatch(/unknown placeholder \{name\}/);
    expect(storagePathProblem('{id.png')).toMatch(/unmatched/);
    expect(storagePathProblem('id}.png')).toMatch(/unmatched/);
    expect(storagePathProblem('/{id}')).toMatch(/must not start with \//);
    expect(storagePathProblem('a\nb')).toMatch(/control/);
    expect(storagePathProblem('')).toMatch(/empty/);
    expect(storagePathProblem('a'.repeat(512))).toBeNull();
    expect(storagePathProblem('a'.repeat(513))).toMatch(/at most 512/);
  });
});
