import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const root = join(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(join(root, 'jest.config.js')) as { projects: Array<{ displayName: string; roots?: string[]; testRegex: string }> };

/** Every file under `dir`, recursively (absolute paths). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

/** The jest projects (jest.config.js) that would run the file at `path`: its regex matches and it lies under one of the project's roots. */
function projectsOf(path: string): string[] {
  return config.projects
    .filter((p) => new RegExp(p.testRegex).test(path))
    .filter((p) => !p.roots || p.roots.some((r) => path.startsWith(r.replace('<rootDir>', root) + sep)))
    .map((p) => p.displayName);
}

/**
 * The test layout of docs/testing.md: a test file under `test/` outside the layer folders would match
 * no jest project and silently never run.
 */
describe('test layout', () => {
  const testFiles = filesUnder(join(root, 'test')).filter((f) => /[.-]spec\.ts$/.test(f));

  it('finds the test files', () => {
    expect(testFiles.length).toBeGreaterThan(40);
  });

  it('puts every test file under test/ in exactly one jest project, the one of its folder', () => {
    const misplaced = testFiles
      .map((f) => ({ file: relative(root, f), projects: projectsOf(f) }))
      .filter(({ file, projects }) => projects.length !== 1 || file.split(sep)[1] !== projects[0]);
    expect(misplaced).toEqual([]);
  });
});
