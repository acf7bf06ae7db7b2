import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  ARTIFACT_KINDS,
  artifactColumns,
  artifactEventFields,
  artifactFiles,
  artifactJobFields,
  artifactsWithoutCopy,
  copyArtifacts,
  filesBesideImage,
  SWEPT_COLUMNS,
} from './artifacts';

const url = (file: string) => `https://glimpse.test/files/${file}`;

/** A job's artifacts in the service's storage, each result file named by `name`: image, thumbnail, the four extracted files and metadata. */
const stored = (name: (file: string) => string) => ({
  resultFile: name('img.png'),
  thumbnailFile: name('thumb.png'),
  extracted: {
    markdown: { file: name('a.md'), bytes: 3, truncated: false },
    html: { file: name('b.html'), bytes: 4, truncated: true },
    text: { file: name('c.txt'), bytes: 5, truncated: false },
    links: { file: name('d.json'), count: 2 },
    metadata: { title: 'T' } as never,
  },
});

/** A job row with every artifact, and a delivery. */
const ROW = artifactColumns({ ...stored((file) => file), storage: { destinationId: 'dst_1', bucket: 'b', key: 'k.png', etag: '"e"' } });

describe('the artifacts table (src/results/artifacts.ts)', () => {
  it('declares today’s artifacts, in delivery order', () => {
    expect(ARTIFACT_KINDS).toEqual(['image', 'thumbnail', 'extracted', 'storage']);
    expect(SWEPT_COLUMNS).toEqual(['resultFile', 'thumbnailFile', 'extracted']);
  });

  it('shows them on the job (only once done) and on screenshot.completed (no storage there)', () => {
    expect(artifactJobFields(ROW, true, url)).toEqual({
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
    expect(artifactJobFields(ROW, false, url)).toEqual({ url: null, thumbnailUrl: null, extracted: null, storage: null });
    const event = artifactEventFields(ROW, url);
    expect(Object.keys(event)).toEqual(['publicUrl', 'thumbnailUrl', 'extracted']);
    expect(event.publicUrl).toBe(url('img.png'));
    expect(artifactEventFields(artifactColumns({}), url)).toEqual({ publicUrl: null, thumbnailUrl: null, extracted: null });
  });

  it('lists every result file the sweep and a failed delivery delete, and none of the customer’s bucket', () => {
    expect(artifactFiles(ROW)).toEqual(['img.png', 'thumb.png', 'a.md', 'b.html', 'c.txt', 'd.json']);
    expect(artifactFiles({ resultFile: null, extracted: null })).toEqual([]);
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
    expect(artifactsWithoutCopy(ROW)).toEqual({
      resultFile: null,
      thumbnailFile: null,
      extracted: { metadata: { title: 'T' } },
      storage: ROW.storage,
    });
  });

  it('copies every result file for a cache hit (not the delivery), and gives up when one is gone', async () => {
    const copied: string[] = [];
    const copy = async (file: string) => {
      copied.push(file);
      return `copy-${file}`;
    };
    const fresh = await copyArtifacts(ROW, copy);
    expect(copied).toEqual(['img.png', 'thumb.png', 'a.md', 'b.html', 'c.txt', 'd.json']);
    expect(fresh).toEqual({ ...stored((file) => `copy-${file}`), storage: null });
    expect(await copyArtifacts(ROW, async (file) => (file === 'c.txt' ? null : file))).toBeNull();
  });

  it('is the one place that handles a result file column: only the table, the entity, the migrations and the producer name thumbnailFile', () => {
    const src = join(__dirname, '..');
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
    const naming = files(src)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && readFileSync(f, 'utf8').includes('thumbnailFile'))
      .map((f) => relative(src, f))
      .filter((f) => !f.startsWith('database/migrations/'))
      .sort();
    expect(naming).toEqual(['results/artifacts.ts', 'screenshots/capture.processor.ts', 'screenshots/screenshot-job.entity.ts']);
  });
});
