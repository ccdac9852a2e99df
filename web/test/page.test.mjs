// The web page (index.html) in headless Chromium: it loads the wasm
// module, trains diabetes on WebGPU and on the CPU (wasm) and must show
// "identical: yes". Chromium runs with WebGPU on Vulkan (Mesa's lavapipe
// here); the page posts its results' text back to the test's server on
// 127.0.0.1. Needs Debian's chromium (.ci/setup installs it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serve } from '../scripts/serve.mjs';

function chromium() {
  for (const c of [process.env.CHROMIUM, 'chromium', 'chromium-browser', 'google-chrome']) {
    if (!c) continue;
    try {
      execFileSync('sh', ['-c', `command -v "${c}"`], { stdio: 'ignore' });
      return c;
    } catch {}
  }
  return null;
}

test('the page trains diabetes on WebGPU in headless Chromium and shows identical: yes', { timeout: 240000 }, async () => {
  const bin = chromium();
  assert.ok(bin, "no chromium on PATH (or $CHROMIUM): install Debian's chromium (.ci/setup does)");
  let onReport;
  const reported = new Promise((resolve) => (onReport = resolve));
  const server = await serve(0, (body) => onReport(body));
  const url = `http://127.0.0.1:${server.address().port}/index.html?auto=1&trees=30&seed=1&report=/report`;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gotrain-chromium-'));
  const child = spawn(bin, ['--headless=new', '--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan,WebGPU',
    '--use-vulkan=native', '--use-angle=vulkan', ...(process.env.CHROMIUM_FLAGS || '').split(' ').filter(Boolean), '--no-first-run', '--no-default-browser-check', `--user-data-dir=${profile}`, url],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr = (stderr + c).slice(-4000)));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(`chromium exited (${code}) before the page reported:\n${stderr}`)));
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(`no report from the page within 200 s:\n${stderr}`), 200000)));
  const t0 = performance.now();
  const text = await Promise.race([reported, exited, timeout]);
  clearTimeout(timer);
  if (child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM'); // the browser's process group, which this test started
    } catch {}
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10000))]);
  }
  server.close();
  try {
    fs.rmSync(profile, { recursive: true, force: true });
  } catch {}
  console.log(`page (${((performance.now() - t0) / 1000).toFixed(1)} s, lavapipe: CPU times):\n${text}`);
  assert.match(text, /adapter: WebGPU adapter: \S/);
  assert.match(text, /identical: yes/);
  assert.doesNotMatch(text, /error: \S/);
});
