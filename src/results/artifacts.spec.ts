import 'reflect-metadata';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  ARTIFACT_KINDS,
  artifactEntries,
  artifactEventFields,
  artifactExamples,
  artifactFiles,
  artifactJobFields,
  artifactsWithoutCopy,
  copyArtifacts,
  filesBesideImage,
  RESULT_ARTIFACTS,
  StoredArtifacts,
  storedArtifacts,
} from './artifacts';

const url = (file: string) => `https://glimpse.test/files/${file}`;

/** A job's artifacts in the service's storage, each result file named by `name`: image, thumbnail, the four extracted files and metadata. */
const stored = (name: (file: string) => string) => ({
  image: name('img.png'),
  thumbnail: name('thumb.png'),
  extracted: {
    markdown: { file: name('a.md'), bytes: 3, truncated: false },
    html: { file: name('b.html'), bytes: 4, truncated: true },
    text: { file: name('c.txt'), bytes: 5, truncated: false },
    links: { file: name('d.json'), count: 2 },
    metadata: { title: 'T' } as never,
  },
});

/** A job row's `artifacts` with every artifact, and a delivery. */
const ROW: StoredArtifacts = { ...stored((file) => file), storage: { destinationId: 'dst_1', bucket: 'b', key: 'k.png', etag: '"e"' } };

describe('the artifacts table (src/results/artifacts.ts)', () => {
  it('declares today’s artifacts, in delivery order (the image first, the delivery itself last)', () => {
    expect(ARTIFACT_KINDS).toEqual(expect.arrayContaining(['image', 'thumbnail', 'extracted', 'storage']));
    expect(ARTIFACT_KINDS[0]).toBe('image');
    expect(ARTIFACT_KINDS.at(-1)).toBe('storage');
  });

  it('keeps in the job row only the artifacts a job has', () => {
    expect(storedArtifacts({ image: 'img.png', thumbnail: null, extracted: undefined, storage: null })).toEqual({ image: 'img.png' });
    expect(storedArtifacts({})).toEqual({});
  });

  it('shows them on the job (only once done) and on screenshot.completed (no storage there)', () => {
    expect(artifactJobFields(ROW, true, url)).toMatchObject({
      url: url('img.png'),
      thumbnailUrl: url('thumb.png'),
      extracted: {
        markdown: { url: url('a.md'), bytes: 3, truncated: false },
        html: { url: url('b.html'), bytes: 4, truncated: true },
        text: { url: url('c.txt'), bytes: 5, truncated: false },
        links: { url: url('d.json'), count: 2 },
        metadata: { title: 'T' },
      },
      storage: ROW.storage,
    });
    const jobFields = artifactEntries().map(([, a]) => a.jobField);
    const eventFields = artifactEntries().flatMap(([, a]) => a.eventField ?? []);
    const nulls = (fields: string[]) => Object.fromEntries(fields.map((field) => [field, null]));
    expect(artifactJobFields(ROW, false, url)).toEqual(nulls(jobFields));
    expect(artifactJobFields({}, true, url)).toEqual(nulls(jobFields));
    const event = artifactEventFields(ROW, url);
    expect(Object.keys(event)).toEqual(eventFields);
    expect(eventFields).toEqual(expect.arrayContaining(['publicUrl', 'thumbnailUrl', 'extracted']));
    expect(eventFields).not.toContain('storage');
    expect(event).toMatchObject({ publicUrl: url('img.png'), thumbnailUrl: url('thumb.png') });
    expect(artifactEventFields({}, url)).toEqual(nulls(eventFields));
  });

  it('lists every result file the sweep and a failed delivery delete, and none of the customer’s bucket', () => {
    expect(artifactFiles(ROW)).toEqual(['img.png', 'thumb.png', 'a.md', 'b.html', 'c.txt', 'd.json']);
    expect(artifactFiles({ storage: ROW.storage })).toEqual([]);
    expect(artifactFiles({})).toEqual([]);
  });

  it('writes the thumbnail and the extracted files beside the image, each with its extension', () => {
    expect(filesBesideImage(ROW, 'png').map(({ file, ext }) => [file, ext])).toEqual([
      ['thumb.png', 'thumb.png'],
      ['a.md', 'md'],
      ['b.html', 'html'],
      ['c.txt', 'txt'],
      ['d.json', 'json'],
    ]);
  });

  it('keeps only the inline metadata and the delivery with keepCopy: false', () => {
    expect(artifactsWithoutCopy(ROW)).toEqual({ extracted: { metadata: { title: 'T' } }, storage: ROW.storage });
    expect(artifactsWithoutCopy({ image: 'img.png', storage: ROW.storage as never })).toEqual({ storage: ROW.storage });
  });

  it('copies every result file for a cache hit (not the delivery), and gives up when one is gone', async () => {
    const copied: string[] = [];
    const copy = async (file: string) => {
      copied.push(file);
      return `copy-${file}`;
    };
    const fresh = await copyArtifacts(ROW, copy);
    expect(copied).toEqual(['img.png', 'thumb.png', 'a.md', 'b.html', 'c.txt', 'd.json']);
    expect(fresh).toEqual(stored((file) => `copy-${file}`));
    expect(await copyArtifacts(ROW, async (file) => (file === 'c.txt' ? null : file))).toBeNull();
  });

  it('gives the OpenAPI examples of a done job and of screenshot.completed from each entry', () => {
    const { job, event } = artifactExamples();
    expect(Object.keys(job)).toEqual(artifactEntries().map(([, a]) => a.jobField));
    expect(Object.keys(event)).toEqual(artifactEntries().flatMap(([, a]) => a.eventField ?? []));
    expect(event).toMatchObject({ publicUrl: RESULT_ARTIFACTS.image.openapi.example, thumbnailUrl: null, extracted: null });
  });

  it('is the one place that names an artifact: no other code outside the table, its producers and the migrations reads a kind by name', () => {
    const src = join(__dirname, '..');
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
    const naming = files(src)
      .filter(
        (f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && /artifacts\??\.thumbnail\b|\bthumbnail_file\b/.test(readFileSync(f, 'utf8')),
      )
      .map((f) => relative(src, f))
      .filter((f) => !f.startsWith('database/migrations/'))
      .sort();
    expect(naming).toEqual([]);
  });
});
