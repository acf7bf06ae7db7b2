/*
 * The benchmark's pages, served from a process of their own so their CPU counts for neither side of
 * the race. Listens on 127.0.0.1 … 127.0.0.<SITES> (one server per address, distinct sites as real
 * traffic crosses them) and prints one JSON line: { simple: [urls], spa: [urls] }.
 *
 * - simple: a small static page;
 * - spa: Swagger UI (from `swagger-ui-dist`, which @nestjs/swagger installs) rendering Glimpse's own
 *   OpenAPI document, given inline so the page makes no request outside its site;
 * - `/animated` (same sites): a canvas repainted with coloured noise on every animation frame, the
 *   worst case for a run's video encoder (the video's bitrate stays at its cap).
 */
const { createServer } = require('node:http');
const { readFileSync } = require('node:fs');
const { join, dirname, resolve } = require('node:path');

const SITES = Number(process.env.SITES || 8);
const root = resolve(__dirname, '..');
const dist = dirname(require.resolve('swagger-ui-dist/package.json', { paths: [root] }));
const spec = readFileSync(join(root, 'openapi/openapi.json'), 'utf8');

const SIMPLE =
  '<!doctype html><html><head><title>bench</title></head><body style="font-family:sans-serif">' +
  '<h1>Glimpse benchmark</h1><p>A simple local page.</p></body></html>';
const SPA =
  '<!doctype html><html><head><meta charset="utf-8"><title>Swagger UI</title>' +
  '<link rel="stylesheet" href="/ui/swagger-ui.css"></head><body><div id="swagger-ui"></div>' +
  '<script src="/ui/swagger-ui-bundle.js"></script><script src="/ui/swagger-ui-standalone-preset.js"></script>' +
  '<script src="/spec.js"></script>' +
  '<script>window.onload = function () { window.ui = SwaggerUIBundle({ spec: window.SPEC, dom_id: "#swagger-ui", ' +
  'presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: "StandaloneLayout" }); };</script>' +
  '</body></html>';
const ANIMATED =
  '<!doctype html><html><head><title>animated</title><style>html,body{margin:0;height:100%}canvas{width:100%;height:100%;display:block}</style></head>' +
  '<body><canvas id="c"></canvas><script>const c = document.getElementById("c"), g = c.getContext("2d");' +
  'c.width = innerWidth; c.height = innerHeight; let t = 0;' +
  'function draw() { t++; const w = 16, h = 16;' +
  'for (let y = 0; y < c.height; y += h) for (let x = 0; x < c.width; x += w) {' +
  'g.fillStyle = "hsl(" + ((x + y + t * 7) % 360) + "," + (40 + Math.random() * 60) + "%," + (20 + Math.random() * 60) + "%)"; g.fillRect(x, y, w, h); }' +
  'requestAnimationFrame(draw); } draw();</script></body></html>';
const files = {
  '/ui/swagger-ui.css': ['text/css', readFileSync(join(dist, 'swagger-ui.css'))],
  '/ui/swagger-ui-bundle.js': ['text/javascript', readFileSync(join(dist, 'swagger-ui-bundle.js'))],
  '/ui/swagger-ui-standalone-preset.js': ['text/javascript', readFileSync(join(dist, 'swagger-ui-standalone-preset.js'))],
  '/spec.js': ['text/javascript', Buffer.from(`window.SPEC = ${spec};`)],
  '/': ['text/html', Buffer.from(SIMPLE)],
  '/spa': ['text/html', Buffer.from(SPA)],
  '/animated': ['text/html', Buffer.from(ANIMATED)],
};

function handle(req, res) {
  const file = files[req.url.split('?')[0]];
  if (!file) return res.writeHead(404).end();
  // Static assets may be cached as a real site's would; each fresh context starts with an empty cache anyway.
  res.writeHead(200, { 'content-type': file[0], 'cache-control': 'public, max-age=3600' }).end(file[1]);
}

(async () => {
  const simple = [];
  const spa = [];
  for (let i = 1; i <= SITES; i++) {
    const host = `127.0.0.${i}`;
    const server = createServer(handle);
    await new Promise((r) => server.listen(0, host, r));
    const { port } = server.address();
    simple.push(`http://${host}:${port}/`);
    spa.push(`http://${host}:${port}/spa`);
  }
  process.stdout.write(`${JSON.stringify({ simple, spa })}\n`);
})();
