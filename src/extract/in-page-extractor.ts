import { readFileSync } from 'node:fs';
import type { Page } from 'playwright';
import {
  EXTRACT_CAPS,
  EXTRACT_LINK_TEXT_MAX_CHARS,
  EXTRACT_LINKS_MAX,
  EXTRACT_METADATA_CAPS,
  ExtractKind,
  MarkdownMode,
} from '../results/extracted';
import { limitPageContent, PageContent } from './extracted-limits';

/**
 * The browser builds of Mozilla Readability, turndown and turndown-plugin-gfm, read once from
 * node_modules. They run inside the page on a clone of its document: no DOM on the server.
 * In the wrapper, `module`/`exports` are local, so turndown's UMD build defines no page global.
 */
let libraries: string | undefined;
function markdownLibraries(): string {
  libraries ??= [
    'var module = { exports: {} }, exports = module.exports;',
    readFileSync(require.resolve('turndown/lib/turndown.browser.umd.js'), 'utf8'),
    'var TurndownService = module.exports;',
    readFileSync(require.resolve('turndown-plugin-gfm/dist/turndown-plugin-gfm.js'), 'utf8'),
    readFileSync(require.resolve('@mozilla/readability/Readability.js'), 'utf8'),
  ].join('\n;\n');
  return libraries;
}

/**
 * The extractor, plain JavaScript evaluated in the page as the body of `function (args)`. It cuts every
 * text at its cap (bytes of UTF-8, at a character boundary, with `TextEncoder.encodeInto`), the link
 * texts and the metadata before they leave the page, so an ordinary page transfers no more than the
 * caps. That cut only saves the transfer: the limits that count are applied again in Node after
 * reading ({@link limitPageContent}), never trusted to code running in the page.
 */
const EXTRACTOR = String.raw`
var want = {};
args.kinds.forEach(function (k) { want[k] = true; });
function cut(s, cap) {
  s = s || '';
  if (s.length * 3 <= cap) return { content: s, truncated: false };
  var read = new TextEncoder().encodeInto(s, new Uint8Array(cap)).read;
  return read < s.length ? { content: s.slice(0, read), truncated: true } : { content: s, truncated: false };
}
function abs(u) {
  if (u == null) return null;
  u = String(u).trim();
  if (!u) return null;
  try { return new URL(u, document.baseURI).href; } catch (e) { return null; }
}
function clean(s) { return (s || '').replace(/\s+/g, ' ').trim(); }
var out = {};
if (want.metadata) {
  var og = new Map(), tw = new Map(), named = new Map();
  var room = args.metadata.entriesMax;
  // One character more than the cap: Node's cut, which never splits a surrogate pair, decides.
  document.querySelectorAll('meta[content]').forEach(function (m) {
    var key = (m.getAttribute('property') || m.getAttribute('name') || '').trim().slice(0, args.metadata.valueMaxChars + 1);
    var value = m.getAttribute('content').slice(0, args.metadata.valueMaxChars + 1);
    var lower = key.toLowerCase();
    if (!key) return;
    if (lower.indexOf('og:') === 0) { if (room > 0 && !og.has(key.slice(3))) { og.set(key.slice(3), value); room--; } }
    else if (lower.indexOf('twitter:') === 0) { if (room > 0 && !tw.has(key.slice(8))) { tw.set(key.slice(8), value); room--; } }
    else if (!named.has(lower)) named.set(lower, value);
  });
  var link = function (rel) {
    var l = document.querySelector('link[rel~="' + rel + '" i][href]');
    return l ? abs(l.getAttribute('href')) : null;
  };
  out.metadata = {
    title: clean(document.title) || og.get('title') || tw.get('title') || null,
    description: named.get('description') || og.get('description') || tw.get('description') || null,
    lang: document.documentElement.getAttribute('lang') || null,
    canonicalUrl: link('canonical'),
    siteName: og.get('site_name') || null,
    image: abs(og.get('image') || og.get('image:url') || tw.get('image') || tw.get('image:src')),
    favicon: link('icon'),
    openGraph: Object.fromEntries(og),
    twitter: Object.fromEntries(tw),
  };
}
if (want.links) {
  var seen = new Set(), links = [];
  var anchors = document.querySelectorAll('a[href]');
  for (var i = 0; i < anchors.length && links.length < args.linksMax; i++) {
    var url = abs(anchors[i].getAttribute('href'));
    if (!url || /^javascript:/i.test(url) || seen.has(url)) continue;
    seen.add(url);
    links.push({ url: url, text: clean(anchors[i].textContent).slice(0, args.linkTextMax), rel: anchors[i].getAttribute('rel') || null });
  }
  out.links = links;
}
if (want.text) out.text = cut(document.body ? document.body.innerText : '', args.caps.text);
if (want.html) {
  var doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\n' : '';
  out.html = cut(doctype + document.documentElement.outerHTML, args.caps.html);
}
if (want.markdown) {
  var clone = document.cloneNode(true);
  clone.querySelectorAll('script, style, noscript, template').forEach(function (n) { n.remove(); });
  clone.querySelectorAll('a[href]').forEach(function (a) { var h = abs(a.getAttribute('href')); if (h) a.setAttribute('href', h); });
  clone.querySelectorAll('img[src]').forEach(function (img) { var s = abs(img.getAttribute('src')); if (s) img.setAttribute('src', s); });
  var td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  td.use(turndownPluginGfm.gfm);
  td.remove(['iframe', 'object', 'embed']);
  var markdown = null;
  if (args.markdownMode === 'readable') {
    var article = new Readability(clone).parse();
    if (article && article.content) {
      var title = clean(article.title || document.title);
      markdown = (title ? '# ' + title + '\n\n' : '') + td.turndown(article.content);
    }
  }
  if (markdown === null) markdown = clone.body ? td.turndown(clone.body) : '';
  out.markdown = cut(markdown, args.caps.markdown);
}
return out;
`;

/**
 * Extracts `kinds` from the loaded page (CONTRACT.md, "Extracted content"), then applies the limits in
 * Node on what the page answered ({@link limitPageContent}; CONTRACT.md, "Tenancy: fair share and
 * isolation"): `metadata` (title,
 * description, lang, canonical, site name, OG/Twitter properties, image and favicon, URLs absolute),
 * `links` (every `a[href]`, absolute, de-duplicated by URL, at most {@link EXTRACT_LINKS_MAX}), `text`
 * (the body's `innerText`), `html` (the DOM after scripts, with its doctype) and `markdown`
 * (`readable`: Mozilla Readability on a clone of the document, its title as the first `# ` heading;
 * `full`: the whole body; turndown with GitHub-flavoured tables and fenced code), each text cut at
 * {@link EXTRACT_CAPS}. The reading runs in the page, in a JavaScript world of its own
 * ({@link evaluateInOwnWorld}). Rejects when the page's evaluation fails or the page is gone.
 */
export async function extractInPage(page: Page, kinds: readonly ExtractKind[], markdownMode: MarkdownMode): Promise<PageContent> {
  const args = {
    kinds,
    markdownMode,
    caps: EXTRACT_CAPS,
    linksMax: EXTRACT_LINKS_MAX,
    linkTextMax: EXTRACT_LINK_TEXT_MAX_CHARS,
    metadata: EXTRACT_METADATA_CAPS,
  };
  const script = `(function (args) {\n${kinds.includes('markdown') ? markdownLibraries() : ''}\n${EXTRACTOR}\n})(${JSON.stringify(args)})`;
  return limitPageContent(await evaluateInOwnWorld(page, script), kinds);
}

/**
 * The value of `expression` (JSON-like, returned by value) evaluated in an isolated world of the page's
 * main frame (the DevTools protocol's `Page.createIsolatedWorld`, as browser extensions' content
 * scripts): the same DOM, its own JavaScript globals, so the page's scripts cannot change the functions
 * the extractor calls (`String.prototype.slice`, `TextEncoder`, `querySelectorAll`, …); and not subject
 * to the page's Content-Security-Policy. Rejects with the evaluation's error, or the protocol's when
 * the page is gone.
 */
async function evaluateInOwnWorld(page: Page, expression: string): Promise<unknown> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { frameTree } = await cdp.send('Page.getFrameTree');
    const { executionContextId } = await cdp.send('Page.createIsolatedWorld', {
      frameId: frameTree.frame.id,
      worldName: 'glimpse-extract',
    });
    const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', {
      expression,
      contextId: executionContextId,
      returnByValue: true,
    });
    if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
    return result.value;
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}
