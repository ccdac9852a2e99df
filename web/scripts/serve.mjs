#!/usr/bin/env node
// Serves web/ on 127.0.0.1 for the page (npm run serve; then open
// http://127.0.0.1:8080/). The page needs web/dist (npm run build) and a
// browser with WebGPU.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const web = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const types = { '.html': 'text/html', '.mjs': 'text/javascript', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css' };

// serve starts the server on 127.0.0.1:port (0: any free port); onPost
// receives the bodies POSTed to /report. It resolves with the server.
export function serve(port = 8080, onPost = null) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/report') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.end('ok');
        onPost?.(body);
      });
      return;
    }
    let file = path.normalize(path.join(web, decodeURIComponent(url.pathname)));
    if (url.pathname.endsWith('/')) file = path.join(file, 'index.html');
    if (!file.startsWith(web + path.sep) || file.includes(`${path.sep}node_modules${path.sep}`) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] || 'application/octet-stream', 'cache-control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.argv[2] || 8080);
  const server = await serve(port);
  console.log(`serving ${web} at http://127.0.0.1:${server.address().port}/ (Ctrl-C stops)`);
}
