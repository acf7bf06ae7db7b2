// Copies the dashboard's templates and static files next to the compiled module (tsc copies only .ts).
const { cpSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const root = join(__dirname, '..');
for (const dir of ['views', 'assets']) {
  const to = join(root, 'dist', 'dashboard', dir);
  rmSync(to, { recursive: true, force: true });
  cpSync(join(root, 'src', 'dashboard', dir), to, { recursive: true });
}
