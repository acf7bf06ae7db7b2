import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

const ARTICLE = `<!doctype html><html lang="en"><head><title>Tide Tables</title>
<meta name="description" content="When the water comes and goes.">
<meta property="og:site_name" content="Harbour Notes"><meta name="twitter:card" content="summary"></head>
<body><nav>MENU <a href="/">Home</a></nav><article><h1>Tide Tables</h1>
${'<p>High water comes twice a day, a little later each day, and the harbour master posts the times on the quay. </p>'.repeat(8)}
<table><thead><tr><th>Day</th><th>High water</th></tr></thead><tbody><tr><td>Monday</td><td>06:12</td></tr></tbody></table>
</article></body></html>`;

/** A page whose readable markdown is longer than the 100,000 characters read_page returns inline. */
const LONG = `<!doctype html><html><head><title>Long</title></head><body><article><h1>Long</h1>${'<p>The sea keeps its own counsel and its own time, and the keeper writes it all down. </p>'.repeat(2000)}</article></body></html>`;

describe('MCP read_page (CONTRACT.md, "Extracted content")', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let client: Client;

  beforeAll(async () => {
    pages = await startPageServer({
      '/tides': ARTICLE,
      '/long': LONG,
      '/slow': (_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(ARTICLE), 2500),
    });
    t = await startTestApp();
    ({ key } = await t.createKey());
    client = new Client({ name: 'glimpse-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp/${key}`)));
  });

  afterAll(async () => {
    await client?.close();
    await t?.close();
    await pages?.close();
  });

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const texts = (result: CallToolResult) => result.content.flatMap((c) => (c.type === 'text' ? [c.text] : []));

  it('is listed with the capture options as arguments', async () => {
    const { tools } = await client.listTools();
    const readPage = tools.find((tool) => tool.name === 'read_page');
    expect(readPage?.inputSchema).toMatchObject({
      required: ['url'],
      properties: { url: {}, waitUntil: {}, markdownMode: {}, javascript: {} },
    });
    // The structured content is described: the metadata, or the job while it is still running.
    expect(readPage?.outputSchema).toMatchObject({
      type: 'object',
      properties: {
        title: {},
        description: {},
        favicon: {},
        openGraph: {},
        statusCode: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
        finalUrl: {},
        id: {},
        status: {},
      },
    });
  });

  it('returns the markdown as text and the metadata as structured content, counting one capture', async () => {
    const before = (await call('get_quota')).structuredContent as { used: number };
    const result = await call('read_page', { url: `${pages.url}/tides` });
    expect(result.isError).toBeFalsy();
    const [markdown] = texts(result);
    expect(markdown.startsWith('# Tide Tables\n')).toBe(true);
    expect(markdown).toContain('| Monday | 06:12 |');
    expect(markdown).toContain('High water comes twice a day');
    expect(markdown).not.toContain('MENU');
    expect(result.content.some((c) => c.type === 'image')).toBe(false);
    expect(result.structuredContent).toMatchObject({
      title: 'Tide Tables',
      description: 'When the water comes and goes.',
      lang: 'en',
      siteName: 'Harbour Notes',
      openGraph: { site_name: 'Harbour Notes' },
      twitter: { card: 'summary' },
      statusCode: 200,
      finalUrl: `${pages.url}/tides`,
    });
    const after = (await call('get_quota')).structuredContent as { used: number };
    expect(after.used).toBe(before.used + 1);
  });

  it('returns the job id and status when the page is not read in time (the client validates both answers against the output schema)', async () => {
    const result = await call('read_page', { url: `${pages.url}/slow`, timeoutSeconds: 1 });
    expect(result.isError).toBeFalsy();
    const running = result.structuredContent as { id: string; status: string };
    expect(running).toEqual({ id: expect.stringMatching(/^scr_/), status: expect.stringMatching(/^(pending|processing)$/) });
    expect(texts(result)[1]).toContain(`get_screenshot with id "${running.id}"`);
    let job = (await call('get_screenshot', { id: running.id })).structuredContent as { status: string };
    for (let i = 0; i < 100 && (job.status === 'pending' || job.status === 'processing'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = (await call('get_screenshot', { id: running.id })).structuredContent as { status: string };
    }
    expect(job.status).toBe('done');
  });

  it('cuts markdown longer than 100,000 characters and says so', async () => {
    const result = await call('read_page', { url: `${pages.url}/long`, markdownMode: 'full' });
    const [markdown] = texts(result);
    expect(markdown.length).toBe(100_000 + '…[truncated]'.length);
    expect(markdown.endsWith('…[truncated]')).toBe(true);
    expect(markdown.startsWith('# Long')).toBe(true);
  });

  it('refuses invalid arguments with VALIDATION_FAILED and counts nothing', async () => {
    const before = (await call('get_quota')).structuredContent as { used: number };
    const result = await call('read_page', { url: `${pages.url}/tides`, markdownMode: 'summary' });
    expect(result.isError).toBe(true);
    expect(texts(result)[0]).toMatch(/^VALIDATION_FAILED/);
    const after = (await call('get_quota')).structuredContent as { used: number };
    expect(after.used).toBe(before.used);
  });
});
