import { PageServer, startPageServer } from './page-server';

/**
 * The three-page flow of the browser session run tests, served on loopback: `/login` (a form posting
 * to `/welcome` with GET), `/welcome` (a link to `/report`), `/report` (logs one console error and
 * requests a missing image).
 */
export async function startRunPages(): Promise<PageServer> {
  return startPageServer({
    '/login': `<!doctype html><html><head><title>Sign in</title></head>
      <body style="margin:0;background:#fff"><h1>Sign in</h1>
      <form action="/welcome" method="get">
        <input id="user" name="user"><input id="password" name="password" type="password">
        <button id="submit" type="submit">Sign in</button>
      </form></body></html>`,
    '/welcome': `<!doctype html><html><head><title>Welcome</title></head>
      <body style="margin:0;background:rgb(0,128,255)"><h1 id="hello">Welcome</h1>
      <a id="next" href="/report">Report</a></body></html>`,
    '/report': `<!doctype html><html><head><title>Quarterly report</title></head>
      <body style="margin:0;background:#fc0"><h1>Report</h1>
      <img src="/missing.png" alt="">
      <script>console.error('chart failed to render'); console.log('not an error');</script></body></html>`,
    '/slow': `<!doctype html><title>Slow</title><h1>Nothing ever appears here</h1>`,
  });
}
