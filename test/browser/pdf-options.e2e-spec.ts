import { PageServer, startPageServer } from '../support/page-server';
import { pdfPageCount, pdfTexts } from '../support/pdf-text';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** The pdf additions of CONTRACT.md, "Capture options, second set": headerTemplate, footerTemplate, pageRanges, margin, scale. */
describe('pdf: header, footer, page ranges, margin, scale', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;

  beforeAll(async () => {
    // Five A4 pages of content: each section is forced onto a page of its own.
    const sections = [1, 2, 3, 4, 5].map((n) => `<section style="break-after:page">Section${n}</section>`).join('');
    pages = await startPageServer({ '/doc': `<!doctype html><html><body>${sections}</body></html>` });
    t = await startTestApp();
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function pdf(options: Record<string, unknown>): Promise<Buffer> {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/doc`, format: 'pdf', pdf: options } });
    expect(res.status).toBe(202);
    const job = await waitForJob(t, key, res.body.id);
    expect(job).toMatchObject({ status: 'done', error: null });
    return Buffer.from(await (await fetch(job.url)).arrayBuffer());
  }

  it('without the additions: every page, no header', async () => {
    const doc = await pdf({});
    expect(pdfPageCount(doc)).toBe(5);
    expect(pdfTexts(doc).join('|')).not.toContain('Quarterly');
  });

  it('headerTemplate and footerTemplate with the page number classes, margin, pageRanges', async () => {
    const doc = await pdf({
      headerTemplate: '<div style="font-size:10px">Quarterly Report</div>',
      footerTemplate: '<div style="font-size:10px">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
      margin: { top: '25mm', bottom: '25mm', left: '10mm', right: '10mm' },
      pageRanges: '2-3, 5',
    });
    expect(pdfPageCount(doc)).toBe(3);
    const text = pdfTexts(doc).join('|');
    expect(text.match(/Quarterly Report/g)).toHaveLength(3);
    for (const n of [2, 3, 5]) expect(text).toContain(`Page ${n} of 5`);
    expect(text).toContain('Section2');
    expect(text).not.toContain('Section1');
  });

  it('scale: a smaller rendering', async () => {
    expect(pdfPageCount(await pdf({ scale: 0.5 }))).toBe(5);
  });

  it('a page range beyond the document fails the job, naming the range', async () => {
    const res = await t.request('POST', '/v1/screenshot', {
      key,
      body: { url: `${pages.url}/doc`, format: 'pdf', pdf: { pageRanges: '9' } },
    });
    const job = await waitForJob(t, key, res.body.id);
    expect(job).toMatchObject({ status: 'failed' });
    expect(job.error).toMatch(/^pdf\.pageRanges 9: /);
  });

  it.each([
    [{ pageRanges: 'all' }, 'pdf.pageRanges'],
    [{ margin: { top: '1em' } }, 'pdf.margin.top'],
    [{ scale: 3 }, 'pdf.scale'],
    [{ headerTemplate: 'x'.repeat(65_537) }, 'pdf.headerTemplate'],
  ])('bad value %#: 400 naming %s', async (options, field) => {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/doc`, format: 'pdf', pdf: options } });
    expect(res.status).toBe(400);
    expect(res.body.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });
});
