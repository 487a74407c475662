#!/usr/bin/env node
// Real-browser end-to-end test of the notebook toolkit.
//
//  1. Copies notebooks/01_target_frequency.ipynb (and setup.sh) into test-output/e2e/work/notebooks/, so
//     JupyterLab's autosave never writes outputs into the committed notebook.
//  2. Starts JupyterLab from .venv on 127.0.0.1 (free port, random token) with the GoNB kernel.
//  3. Opens the notebook in Debian's chromium (playwright-core, no browser download), runs all cells
//     through the Run menu, waits until every cell has run, the kernel is idle and the panel is drawn.
//  4. Moves two sliders of the interactive panel (a mouse drag on one, input/change events on another) and
//     checks that the plotted SVG paths and the read-out change.
//  5. Saves the executed notebook, exports it to HTML with nbconvert, opens that file in the browser with
//     no server behind it and checks that the panel still redraws when a slider moves.
//  6. Saves screenshots under test-output/e2e/, shuts JupyterLab down, exits non-zero on any failure.
//
// Bounded: the whole run is aborted after E2E_TIMEOUT_S seconds (default 300).
'use strict';

const { chromium } = require('playwright-core');
const { spawn, execFileSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test-output', 'e2e');
const WORK = path.join(OUT, 'work');
const NOTEBOOK = '01_target_frequency.ipynb';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TOTAL_TIMEOUT_MS = 1000 * Number(process.env.E2E_TIMEOUT_S || 300);
const RUN_TIMEOUT_MS = 240 * 1000; // running all cells of notebook 01 (compiles Go on first run)

const t0 = Date.now();
function log(msg) {
  console.log(`e2e [${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function goBin() {
  let bin = execFileSync('go', ['env', 'GOBIN'], { encoding: 'utf8' }).trim();
  if (!bin) bin = path.join(execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim(), 'bin');
  return bin;
}

function prepareWork() {
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(path.join(WORK, 'notebooks'), { recursive: true });
  for (const f of [NOTEBOOK, 'setup.sh']) {
    fs.copyFileSync(path.join(ROOT, 'notebooks', f), path.join(WORK, 'notebooks', f));
  }
}

// writeLabSettings writes JupyterLab user settings for the test: render every cell (no windowing, so
// outputs of cells scrolled out of view stay in the DOM), no autosave, no news prompt.
function writeLabSettings(dir) {
  const put = (plugin, file, obj) => {
    fs.mkdirSync(path.join(dir, plugin), { recursive: true });
    fs.writeFileSync(path.join(dir, plugin, file), JSON.stringify(obj));
  };
  put('@jupyterlab/notebook-extension', 'tracker.jupyterlab-settings', { windowingMode: 'none' });
  put('@jupyterlab/docmanager-extension', 'plugin.jupyterlab-settings', { autosave: false });
  put('@jupyterlab/apputils-extension', 'notification.jupyterlab-settings', { fetchNews: 'false' });
}

async function waitForServer(base, token, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`JupyterLab exited early with status ${child.exitCode}`);
    try {
      const r = await fetch(`${base}/api/status`, { headers: { Authorization: `token ${token}` } });
      if (r.ok) return;
    } catch (e) {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('JupyterLab did not answer within the time limit');
}

async function startLab() {
  const port = await freePort();
  const token = crypto.randomBytes(16).toString('hex');
  const jupyter = path.join(ROOT, '.venv', 'bin', 'jupyter');
  if (!fs.existsSync(jupyter)) throw new Error('.venv/bin/jupyter is missing: run make setup');
  const labTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fits-e2e-lab-'));
  writeLabSettings(labTmp);
  const logFile = fs.openSync(path.join(OUT, 'jupyterlab.log'), 'w');
  const env = {
    ...process.env,
    PATH: `${goBin()}:${process.env.PATH}`,
    GOMLX_NO_AUTO_INSTALL: '1',
    FITS_ROOT: ROOT, // the copied notebook's setup.sh replaces the module with this checkout
    FITS_FIGURES_DIR: path.join(WORK, 'figures'),
  };
  const args = [
    'lab', '--no-browser', '--ip=127.0.0.1', `--port=${port}`, '--ServerApp.port_retries=0',
    `--IdentityProvider.token=${token}`, `--ServerApp.root_dir=${WORK}`,
    `--LabApp.workspaces_dir=${labTmp}`, `--LabApp.user_settings_dir=${labTmp}`,
    '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate', '--LabApp.news_url=None',
    '--LabApp.extension_manager=readonly', '--LabApp.expose_app_in_browser=True',
  ];
  if (process.getuid && process.getuid() === 0) args.push('--allow-root');
  const child = spawn(jupyter, args, { cwd: WORK, env, stdio: ['ignore', logFile, logFile], detached: true });
  const base = `http://127.0.0.1:${port}`;
  log(`JupyterLab starting on ${base} (log: test-output/e2e/jupyterlab.log)`);
  await waitForServer(base, token, child, 60000);
  log('JupyterLab is up');
  return { child, base, token, labTmp };
}

async function stopLab(lab) {
  if (!lab) return;
  try {
    await fetch(`${lab.base}/api/shutdown`, { method: 'POST', headers: { Authorization: `token ${lab.token}` } });
  } catch (e) {
    // already gone
  }
  const deadline = Date.now() + 10000;
  while (lab.child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (lab.child.exitCode === null) {
    try { process.kill(-lab.child.pid, 'SIGKILL'); } catch (e) { /* gone */ }
  }
  fs.rmSync(lab.labTmp, { recursive: true, force: true });
  log('JupyterLab shut down');
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
  log(`ok: ${msg}`);
}

async function runNotebook(page, lab) {
  const url = `${lab.base}/lab/tree/notebooks/${NOTEBOOK}?token=${lab.token}`;
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60000 });
  await page.locator('.jp-Notebook .jp-Cell').first().waitFor({ timeout: 60000 });
  log('notebook opened');
  // Wait for the GoNB kernel to be ready (the toolbar's kernel name and an idle status).
  await page.locator('.jp-NotebookPanel-toolbar').getByText('Go (gonb)').first().waitFor({ timeout: 60000 });
  // GoNB reports its status only around executions, so before the first run the status bar may say
  // "Unknown": wait for the kernel to be connected, not idle.
  await waitStatus(page, (s) => s !== 'not shown' && s !== 'starting' && !s.includes('connecting'), 60000);
  log(`GoNB kernel connected (status: ${await kernelStatus(page)})`);
  // JupyterLab may ask which kernel to use when it finds the session it has just started: keep it,
  // whenever the dialog shows up.
  await page.addLocatorHandler(page.locator('.jp-Dialog'), async (dialog) => {
    const title = ((await dialog.locator('.jp-Dialog-header').textContent().catch(() => '')) || '').trim();
    log(`dialog "${title}": accepting`);
    await dialog.locator('.jp-Dialog-button.jp-mod-accept').click();
  });

  // Run > Run All Cells, through the menu as a user would.
  await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Run$/ }).click();
  await page.locator('.lm-Menu-itemLabel', { hasText: /^Run All Cells$/ }).click();
  log('Run > Run All Cells');

  // Every code cell has run (an execution count in the notebook model) and the kernel is idle. The
  // model is read through the app object that --LabApp.expose_app_in_browser puts on window.
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const st = await notebookState(page);
    if (st.counts.length > 0 && st.counts.every((c) => c !== null) && st.kernel === 'idle') break;
    if (Date.now() > deadline) throw new Error(`cells still pending after ${RUN_TIMEOUT_MS / 1000} s: ${JSON.stringify(st)}`);
    await page.waitForTimeout(500);
  }
  log('all cells executed, kernel idle');
}

// notebookState returns the execution count of every code cell (null: not run yet) and the kernel
// status of the current notebook, from JupyterLab's own model.
async function notebookState(page) {
  return page.evaluate(() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    if (!w || !w.content || !w.content.model) return { counts: [], kernel: 'no notebook' };
    const counts = [];
    for (const cell of w.content.model.cells) {
      if (cell.type === 'code') counts.push(cell.executionCount == null ? null : cell.executionCount);
    }
    const k = w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return { counts, kernel: k ? k.status : 'no kernel' };
  });
}

// kernelStatus returns the notebook's kernel status as JupyterLab's status bar reports it
// ("Go (gonb) | Idle"), lower-cased: "idle", "busy", "starting", "unknown", ...
async function kernelStatus(page) {
  return page.evaluate(() => {
    for (const el of document.querySelectorAll('.jp-StatusBar-Item, .jp-StatusBar-TextItem, span')) {
      const m = /^\s*Go \(gonb\)\s*\|\s*([A-Za-z ]+?)\s*$/.exec(el.textContent || '');
      if (m) return m[1].toLowerCase();
    }
    return 'not shown';
  });
}

async function waitStatus(page, ok, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await kernelStatus(page);
    if (ok(s)) return;
    if (Date.now() > deadline) throw new Error(`kernel status still "${s}" after ${timeoutMs / 1000} s`);
    await page.waitForTimeout(300);
  }
}

async function checkOutputs(page) {
  const errors = await page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').allInnerTexts();
  const failed = errors.filter((t) => /exit status [1-9]|panic:|error:/i.test(t));
  check(failed.length === 0, `no cell failed (stderr outputs: ${failed.length ? JSON.stringify(failed).slice(0, 400) : 'none'})`);
  const figs = await page.locator('.jp-OutputArea-output img[src^="data:image/png"]').count();
  check(figs >= 3, `figures rendered inline (${figs} found)`);
  const tables = await page.locator('.jp-OutputArea-output table.fits-table').count();
  check(tables >= 1, `tables rendered (${tables} found)`);
}

async function exercisePanel(page) {
  const panel = page.locator('.fits-panel').first();
  await panel.waitFor({ timeout: 30000 });
  await panel.scrollIntoViewIfNeeded();
  // The script ran: it fills the value labels and the read-out.
  const readout = panel.locator('[data-role=readout]');
  await page.waitForFunction((el) => el.textContent.includes('κ*'), await readout.elementHandle(), { timeout: 30000 });
  check(true, 'panel script ran (read-out filled)');
  await panel.screenshot({ path: path.join(OUT, 'panel-before.png') });

  const ct = panel.locator('path[data-curve=ct]');
  const dt = panel.locator('path[data-curve=dt]');
  const before = { ct: await ct.getAttribute('d'), dt: await dt.getAttribute('d'), text: await readout.textContent() };
  check(before.ct && before.ct.length > 100, `CT path drawn (${before.ct.length} chars)`);

  // 1. Move the f* slider with the mouse, as a user would: press on the thumb and drag it to 80% of
  //    the track (the browser fires input and change events itself).
  const fstar = panel.locator('input[data-param=fstar]');
  const v0 = Number(await fstar.inputValue());
  const box = await fstar.boundingBox();
  const max = Number(await fstar.getAttribute('max'));
  const thumbX = box.x + 8 + (box.width - 16) * (v0 / max);
  await page.mouse.move(thumbX, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
  const v1 = Number(await fstar.inputValue());
  check(v1 > v0, `f* slider dragged with the mouse (${v0} -> ${v1})`);
  const afterKey = { ct: await ct.getAttribute('d'), dt: await dt.getAttribute('d'), text: await readout.textContent() };
  check(afterKey.ct !== before.ct, 'CT path redrawn after the f* slider was dragged');
  check(afterKey.dt !== before.dt, 'DT path redrawn after the f* slider was dragged');
  check(afterKey.text !== before.text, `read-out updated: "${afterKey.text.slice(0, 90)}..."`);

  // 2. Set the τm slider's value and dispatch input/change events.
  const taum = panel.locator('input[data-param=taum]');
  await taum.evaluate((el) => {
    el.value = '0';
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  });
  const afterTau = await ct.getAttribute('d');
  check(afterTau !== afterKey.ct, 'CT path redrawn after the τm slider moved');
  const label = await panel.locator('[data-value=taum]').textContent();
  check(label.trim() === '10 ms', `τm label shows the new value (${label.trim()})`);
  await panel.screenshot({ path: path.join(OUT, 'panel-after.png') });
}

// saveNotebook saves the open notebook (with its outputs) to the work copy through JupyterLab.
async function saveNotebook(page) {
  await page.evaluate(() => window.jupyterapp.commands.execute('docmanager:save'));
  await page.waitForFunction(() => {
    const w = window.jupyterapp.shell.currentWidget;
    return w && w.context && !w.context.model.dirty;
  }, null, { timeout: 30000 });
  log('notebook saved with its outputs (work copy)');
}

// checkExportedHTML exports the saved work copy to HTML and checks the panel there, with no kernel and
// no server: the data and the script travel inside the page.
async function checkExportedHTML(context) {
  const src = path.join(WORK, 'notebooks', NOTEBOOK);
  const html = path.join(OUT, NOTEBOOK.replace(/\.ipynb$/, '.html'));
  execFileSync(path.join(ROOT, '.venv', 'bin', 'jupyter'),
    ['nbconvert', '--to', 'html', '--output-dir', OUT, src], { stdio: ['ignore', 'ignore', 'pipe'] });
  check(fs.existsSync(html), `exported ${path.relative(ROOT, html)}`);
  const page = await context.newPage();
  try {
    await page.goto('file://' + html, { waitUntil: 'domcontentloaded', timeout: 60000 });
    const panel = page.locator('.fits-panel').first();
    await panel.waitFor({ timeout: 30000 });
    const readout = panel.locator('[data-role=readout]');
    await page.waitForFunction((el) => el.textContent.includes('κ*'), await readout.elementHandle(), { timeout: 30000 });
    const ct = panel.locator('path[data-curve=ct]');
    const before = await ct.getAttribute('d');
    await panel.locator('input[data-param=taua]').evaluate((el) => {
      el.value = '0';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    check((await ct.getAttribute('d')) !== before, 'exported HTML: CT path redrawn after the τa slider moved');
    await panel.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: path.join(OUT, 'exported-panel.png') });
  } finally {
    await page.close();
  }
}

async function main() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup (apt-get install chromium)`);
  prepareWork();
  let lab = null;
  let context = null;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fits-e2e-chromium-'));
  try {
    lab = await startLab();
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 1000 },
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-dev-shm-usage',
      ],
    });
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(60000);
    const consoleErrors = [];
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
    try {
      await runNotebook(page, lab);
      await page.screenshot({ path: path.join(OUT, 'notebook-run.png') });
      await checkOutputs(page);
      await exercisePanel(page);
      await page.screenshot({ path: path.join(OUT, 'notebook-final.png') });
      await saveNotebook(page);
    } catch (e) {
      await page.screenshot({ path: path.join(OUT, 'failure.png') }).catch(() => {});
      throw e;
    }
    const panelErrors = consoleErrors.filter((e) => /fits|panel/i.test(e));
    check(panelErrors.length === 0, `no script error from the panel (${panelErrors.join('; ') || 'none'})`);
    await checkExportedHTML(context);
  } finally {
    if (context) await context.close().catch(() => {});
    await stopLab(lab);
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}

const timer = setTimeout(() => {
  console.error(`e2e: FAIL: timed out after ${TOTAL_TIMEOUT_MS / 1000} s`);
  process.exit(1);
}, TOTAL_TIMEOUT_MS);

main().then(
  () => {
    clearTimeout(timer);
    log('PASS (screenshots in test-output/e2e/)');
    process.exit(0);
  },
  (e) => {
    clearTimeout(timer);
    console.error(`e2e: FAIL: ${e && e.message ? e.message : e}`);
    process.exit(1);
  },
);
