#!/usr/bin/env node
// Real-browser end-to-end test of the notebook toolkit's interactive panels (notebooks 01, 02, 03, 03b, 04).
//
//  1. Copies the notebooks (and setup.sh) into test-output/e2e/work/notebooks/, so JupyterLab's autosave
//     never writes outputs into the committed notebooks.
//  2. Starts JupyterLab from .venv on 127.0.0.1 (free port, random token) with the GoNB kernel.
//  3. For each notebook: opens it in Debian's chromium (playwright-core, no browser download), runs all
//     cells through the Run menu, waits until every cell has run and the kernel is idle.
//  4. Drags a slider of its panel with the mouse (and flips its toggle, sets other sliders by input/change
//     events), checks that the drawn SVG paths and the read-out change, and reads the drawn curves back
//     through the plot's axes: they must match the values that tests/e2e/expect computes at that setting
//     by direct fits/theory and fits/sim calls.
//  5. Saves the executed notebook, exports it to HTML (scripts/offline_html.py), opens that file in the
//     browser with no server and no network behind it, checks that its math rendered, that the panel fits
//     the viewport and its stacked time axes line up, that the notebook's "What to look for" claims hold
//     (controls set, read-out read), moves another slider and checks the curves again.
//  6. Saves screenshots under test-output/e2e/, shuts JupyterLab down, exits non-zero on any failure.
//
// E2E_NOTEBOOKS (comma-separated prefixes, e.g. "01,03b") limits the notebooks. Bounded: the whole run
// is aborted after E2E_TIMEOUT_S seconds (default 1500).
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
// Each notebook, its panel (the expect helper's name), the slider dragged with the mouse, sliders set
// before (by events), the toggle flipped, and the sliders moved in the exported HTML.
// claims: steps of the notebook's "What to look for", checked in the exported page from the panel's initial
// position: the controls set (name -> value, as data-state reports them) and what the read-out must then say
// (the full list, with the drawn curves too, is nb's TestWhatToLookFor). stacked: plots whose time axes must
// line up.
const ALL_NOTEBOOKS = [
  { file: '01_target_frequency.ipynb', panel: 'target', drag: 'fstar', then: { taum: 0 }, exported: { taua: 0 }, figs: 3, tables: 1,
    claims: [[{}, ['f*_DT = 10.35 Hz']], [{ fstar: 50 }, ['f*_DT = 56.14 Hz']], [{ fstar: 80 }, ['DT module UNSTABLE']]] },
  { file: '02_discretization.ipynb', panel: 'disc', drag: 'fstar', toggle: 'exact', exported: { dt: 1 }, figs: 3, tables: 1,
    claims: [[{}, ['explicit stable, semi-implicit stable']], [{ fstar: 20 }, ['explicit UNSTABLE, semi-implicit stable', 'gap f*_DT − f* = +0.88 Hz']],
      [{ fstar: 20, dt: 0.002 }, ['+0.36 Hz']], [{ fstar: 20, dt: 0.008 }, ['+2.55 Hz']], [{ fstar: 20, exact: 1 }, ['+0.00 Hz']]] },
  { file: '03_temporal_shaping.ipynb', panel: 'ts', drag: 'lambda1', before: { m: 2 }, toggle: 'nesting', exported: { beta1: 0 }, figs: 3, tables: 1,
    claims: [[{ lambda1: 0.1 }, ['TS delay negative on']], [{ lambda1: 0.5 }, ['no negative TS delay']], [{}, ['closed-loop peak at 15.9 Hz']],
      [{ lambda1: 0.9 }, ['Nyquist edge']]] },
  { file: '03b_single_neuron.ipynb', panel: 'play', drag: 'fstar', before: { m: 2, lambda: 0 }, toggle: 'nesting', exported: { input: 3 }, figs: 0, tables: 0,
    claims: [[{}, ['chirp at 10.5 Hz at the first spike']], [{ fstar: 20 }, ['chirp at 20.1 Hz at the first spike']], [{ amp: 1 }, ['0 spikes']],
      [{ m: 1, lambda: 0.2 }, ['peaks at 8.2 Hz, -3.5 dB']], [{ fstar: 80 }, ['UNSTABLE']]],
    stacked: ['input', 'voltage', 'spikes'] },
  { file: '04_pole_vs_target.ipynb', panel: 'pole', drag: 'kappa', exported: { mu: 0 }, figs: 1, tables: 1,
    claims: [[{}, ['poles -2.000, -3.000']], [{ kappa: 3 }, ['Ω_pole = 0.866 rad/s']], [{ kappa: 0.05 }, ['no target (low-pass)']]] },
];
const ONLY = (process.env.E2E_NOTEBOOKS || '').split(',').filter(Boolean);
const NOTEBOOKS = ALL_NOTEBOOKS.filter((n) => ONLY.length === 0 || ONLY.some((p) => n.file.startsWith(p + '_')));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TOTAL_TIMEOUT_MS = 1000 * Number(process.env.E2E_TIMEOUT_S || 1500);
const RUN_TIMEOUT_MS = 300 * 1000; // running all cells of one notebook (compiles Go on first run)
const EXPECT = path.join(OUT, 'expect'); // tests/e2e/expect, built once

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
  for (const f of [...NOTEBOOKS.map((n) => n.file), 'setup.sh']) {
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
    GOTOOLCHAIN: 'go1.27.3',
    GOEXPERIMENT: 'simd',
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

async function runNotebook(page, lab, NOTEBOOK) {
  const url = `${lab.base}/lab/tree/notebooks/${NOTEBOOK}?token=${lab.token}`;
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60000 });
  await page.locator('.jp-Notebook .jp-Cell').first().waitFor({ timeout: 60000 });
  log(`${NOTEBOOK} opened`);
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

async function checkOutputs(page, nbk) {
  const errors = await page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').allInnerTexts();
  const failed = errors.filter((t) => /exit status [1-9]|panic:|error:/i.test(t));
  check(failed.length === 0, `no cell failed (stderr outputs: ${failed.length ? JSON.stringify(failed).slice(0, 400) : 'none'})`);
  const figs = await page.locator('.jp-OutputArea-output img[src^="data:image/png"]').count();
  check(figs >= nbk.figs, `figures rendered inline (${figs} found)`);
  const tables = await page.locator('.jp-OutputArea-output table.fits-table').count();
  check(tables >= nbk.tables, `tables rendered (${tables} found)`);
}

// curves returns the d attribute of every path of the panel, keyed plot/curve.
async function curves(panel) {
  return panel.evaluate((root) => {
    const out = {};
    for (const svg of root.querySelectorAll('svg[data-plot]')) {
      for (const p of svg.querySelectorAll('path[data-curve]')) out[svg.dataset.plot + '/' + p.dataset.curve] = p.getAttribute('d');
    }
    return out;
  });
}

// setControl sets a slider's index (or a checkbox) and dispatches input and change events.
async function setControl(panel, name, value) {
  await panel.locator(`input[data-param=${name}]`).evaluate((el, v) => {
    if (el.type === 'checkbox') el.checked = !!v;
    else el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, value);
}

// dragSlider drags a slider's thumb with the mouse to 80 % of its track, as a user would; the browser
// fires input and change events itself.
async function dragSlider(page, panel, name) {
  const el = panel.locator(`input[data-param=${name}]`);
  await el.scrollIntoViewIfNeeded();
  const v0 = Number(await el.inputValue());
  const max = Number(await el.getAttribute('max'));
  const box = await el.boundingBox();
  const thumbX = box.x + 8 + (box.width - 16) * (v0 / max);
  await page.mouse.move(thumbX, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
  const v1 = Number(await el.inputValue());
  check(v1 !== v0, `${name} slider dragged with the mouse (${v0} -> ${v1})`);
}

// changed checks that at least one drawn curve and the read-out changed.
function changed(before, after, what) {
  const diff = Object.keys(after.d).filter((k) => after.d[k] !== before.d[k]);
  check(diff.length > 0, `${what}: curves redrawn (${diff.join(', ')})`);
  check(after.text !== before.text, `${what}: read-out updated ("${after.text.slice(0, 80)}...")`);
}

async function snapshot(panel) {
  return { d: await curves(panel), text: await panel.locator('[data-role=readout]').textContent() };
}

// matchesLibrary reads the drawn curves back to data through each plot's axes (data-axes) and compares
// them with tests/e2e/expect's values at the panel's current setting (data-state).
async function matchesLibrary(panel, name, what) {
  const state = await panel.getAttribute('data-state');
  const want = JSON.parse(execFileSync(EXPECT, ['-panel', name, '-state', state], { encoding: 'utf8' }));
  for (const c of want) {
    c.pts = c.pts || [];
    const got = await panel.evaluate((root, c) => {
      const svg = root.querySelector(`svg[data-plot=${c.plot}]`);
      const A = JSON.parse(svg.dataset.axes);
      const d = svg.querySelector(`path[data-curve=${c.curve}]`).getAttribute('d');
      const cmd = c.kind === 'line' || c.kind === 'path' ? /[ML](-?[\d.]+),(-?[\d.]+)/g : /M(-?[\d.]+),(-?[\d.]+)/g;
      const pts = [];
      for (let m; (m = cmd.exec(d));) pts.push([+m[1], +m[2]]);
      return { A, pts };
    }, c);
    const A = got.A;
    const t = (v, l) => (l ? Math.log10(v) : v);
    const px = (x) => A.x0 + (t(x, A.xl) - t(A.a0, A.xl)) / (t(A.a1, A.xl) - t(A.a0, A.xl)) * (A.x1 - A.x0);
    const py = (y) => A.y1 - (t(y, A.yl) - t(A.b0, A.yl)) / (t(A.b1, A.yl) - t(A.b0, A.yl)) * (A.y1 - A.y0);
    let compared = 0;
    let worst = 0;
    for (const [x, y] of c.pts) {
      const ex = px(x);
      if (!(ex >= A.x0 - 0.5 && ex <= A.x1 + 0.5)) continue;
      if (c.kind === 'vlines') {
        const best = Math.min(...got.pts.map((p) => Math.abs(p[0] - ex)));
        worst = Math.max(worst, best);
        compared++;
        continue;
      }
      const ey = py(y);
      if (!(ey >= A.y0 && ey <= A.y1)) continue; // outside the plot: clipped
      if (c.kind === 'points' || c.kind === 'path') {
        const best = Math.min(...got.pts.map((p) => Math.hypot(p[0] - ex, p[1] - ey)));
        worst = Math.max(worst, best);
      } else {
        // the drawn vertex nearest in x must be at this x and height
        let bi = 0;
        for (let i = 1; i < got.pts.length; i++) if (Math.abs(got.pts[i][0] - ex) < Math.abs(got.pts[bi][0] - ex)) bi = i;
        const p = got.pts[bi];
        if (!p || Math.abs(p[0] - ex) > 0.6) throw new Error(`${what}: ${c.plot}/${c.curve} has no vertex at x = ${x} (${ex.toFixed(1)} px)`);
        worst = Math.max(worst, Math.abs(p[1] - ey));
      }
      compared++;
    }
    const need = c.kind === 'line' ? Math.min(5, c.pts.length) : 1;
    check(compared >= need || (c.kind === 'vlines' && c.pts.length === 0 && got.pts.length === 0),
      `${what}: ${c.plot}/${c.curve} compared at ${compared} points`);
    if (c.kind === 'vlines' && c.pts.length === 0) continue;
    check(worst <= 1.2, `${what}: ${c.plot}/${c.curve} matches the library within ${worst.toFixed(2)} px`);
    if (c.kind === 'vlines') check(c.kind !== 'vlines' || got.pts.length === c.pts.filter(([x]) => px(x) >= A.x0 - 0.5 && px(x) <= A.x1 + 0.5).length,
      `${what}: ${c.plot}/${c.curve} draws ${got.pts.length} marks, the library ${c.pts.length}`);
  }
}

async function exercisePanel(page, nbk) {
  const panel = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .fits-panel').first();
  await panel.waitFor({ timeout: 30000 });
  await panel.scrollIntoViewIfNeeded();
  await page.waitForFunction((el) => el.hasAttribute('data-state'), await panel.elementHandle(), { timeout: 30000 });
  check(true, `${nbk.file}: panel script ran`);
  await checkLayout(page, panel, nbk, 'JupyterLab');
  const shot = nbk.file.replace(/\.ipynb$/, '');
  await panel.screenshot({ path: path.join(OUT, `${shot}-panel-before.png`) });
  await matchesLibrary(panel, nbk.panel, 'initial setting');
  for (const [k, v] of Object.entries(nbk.before || {})) await setControl(panel, k, v);
  let before = await snapshot(panel);
  await dragSlider(page, panel, nbk.drag);
  let after = await snapshot(panel);
  changed(before, after, `after dragging ${nbk.drag}`);
  await matchesLibrary(panel, nbk.panel, `after dragging ${nbk.drag}`);
  for (const [k, v] of Object.entries(nbk.then || {})) {
    before = after;
    await setControl(panel, k, v);
    after = await snapshot(panel);
    changed(before, after, `after setting ${k}`);
    await matchesLibrary(panel, nbk.panel, `after setting ${k}`);
  }
  if (nbk.toggle) {
    before = after;
    await panel.locator(`input[data-param=${nbk.toggle}]`).click();
    after = await snapshot(panel);
    changed(before, after, `after clicking ${nbk.toggle}`);
    await matchesLibrary(panel, nbk.panel, `after clicking ${nbk.toggle}`);
  }
  await panel.screenshot({ path: path.join(OUT, `${shot}-panel-after.png`) });
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

// setValue moves a control to the stop whose value (as data-state reports it) is value.
async function setValue(panel, name, value) {
  const max = Number(await panel.locator(`input[data-param=${name}]`).getAttribute('max') || 1);
  for (let i = 0; i <= max; i++) {
    await setControl(panel, name, i);
    const st = JSON.parse(await panel.getAttribute('data-state'));
    if (Math.abs(st[name] - value) <= 1e-9 * Math.max(1, Math.abs(value))) return;
  }
  throw new Error(`control ${name} has no stop at ${value}`);
}

// checkClaims sets each claim's controls from the panel's initial position and reads the read-out.
async function checkClaims(panel, nbk) {
  const initial = JSON.parse(await panel.getAttribute('data-state'));
  for (const [set, says] of nbk.claims || []) {
    for (const [k, v] of Object.entries({ ...initial, ...set })) await setValue(panel, k, v);
    const text = await panel.locator('[data-role=readout]').textContent();
    for (const want of says) check(text.includes(want), `claim at ${JSON.stringify(set)}: the read-out says "${want}"`);
  }
  for (const [k, v] of Object.entries(initial)) await setValue(panel, k, v);
}

// checkLayout: nothing of the panel sticks out of the viewport's width, and the stacked plots' time axes
// start and end at the same screen x.
async function checkLayout(page, panel, nbk, where) {
  const width = await page.evaluate(() => window.innerWidth);
  const right = await panel.evaluate((root) => Math.max(...[...root.querySelectorAll('*')].map((e) => e.getBoundingClientRect().right)));
  check(right <= width + 0.5, `${where}: the panel fits the viewport's width (${right.toFixed(0)} <= ${width} px)`);
  if (!nbk.stacked) return;
  const axes = await panel.evaluate((root, names) => names.map((n) => {
    const svg = root.querySelector(`svg[data-plot=${n}]`);
    const A = JSON.parse(svg.dataset.axes);
    const box = svg.getBoundingClientRect();
    return [box.left + A.x0, box.left + A.x1];
  }), nbk.stacked);
  const spread = (i) => Math.max(...axes.map((a) => a[i])) - Math.min(...axes.map((a) => a[i]));
  check(spread(0) < 0.5 && spread(1) < 0.5, `${where}: time axes of ${nbk.stacked.join(', ')} aligned (${axes.map((a) => a.map((x) => x.toFixed(1)).join('-')).join(', ')})`);
}

// checkExportedHTML exports the saved work copy to HTML and checks the panel there, with no kernel and
// no server: the data and the script travel inside the page.
async function checkExportedHTML(context, nbk) {
  const src = path.join(WORK, 'notebooks', nbk.file);
  const html = path.join(OUT, nbk.file.replace(/\.ipynb$/, '.html'));
  // scripts/offline_html.py: nbconvert's lab template with MathJax inlined (the page needs no network).
  execFileSync(path.join(ROOT, '.venv', 'bin', 'python'),
    [path.join(ROOT, 'scripts', 'offline_html.py'), src, OUT], { stdio: ['ignore', 'ignore', 'pipe'] });
  check(fs.existsSync(html), `exported ${path.relative(ROOT, html)} (${(fs.statSync(html).size / 1e6).toFixed(2)} MB)`);
  const page = await context.newPage();
  try {
    // No network: the page must bring everything (MathJax included) itself.
    const asked = [];
    await page.route(/^(https?|wss?):/, (route) => { asked.push(route.request().url()); return route.abort(); });
    await page.goto('file://' + html, { waitUntil: 'domcontentloaded', timeout: 60000 });
    const panel = page.locator('.fits-panel').first();
    await panel.waitFor({ timeout: 30000 });
    await page.waitForFunction((el) => el.hasAttribute('data-state'), await panel.elementHandle(), { timeout: 30000 });
    await page.waitForFunction(() => document.querySelectorAll('mjx-container').length > 0, null, { timeout: 60000 });
    const raw = await page.evaluate(() => [...document.querySelectorAll('.jp-MarkdownOutput')].map((e) => e.innerText).join('\n').match(/\$[^$\s][^$]*\$/g) || []);
    check(raw.length === 0, `exported HTML: math rendered offline (${await page.locator('mjx-container').count()} formulas; raw TeX left: ${raw.slice(0, 3).join(' ') || 'none'}; network asked for: ${asked.length ? asked.slice(0, 3).join(' ') : 'nothing'})`);
    await checkLayout(page, panel, nbk, 'exported HTML');
    await checkClaims(panel, nbk);
    await matchesLibrary(panel, nbk.panel, 'exported HTML, initial setting');
    for (const [k, v] of Object.entries(nbk.exported)) {
      const before = await snapshot(panel);
      await setControl(panel, k, v);
      changed(before, await snapshot(panel), `exported HTML: ${k} moved`);
      await matchesLibrary(panel, nbk.panel, `exported HTML: after moving ${k}`);
    }
    const before = await snapshot(panel);
    await dragSlider(page, panel, nbk.drag);
    changed(before, await snapshot(panel), `exported HTML: ${nbk.drag} dragged`);
    await matchesLibrary(panel, nbk.panel, `exported HTML: after dragging ${nbk.drag}`);
    await panel.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: path.join(OUT, nbk.file.replace(/\.ipynb$/, '-exported-panel.png')) });
  } finally {
    await page.close();
  }
}

async function main() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: run make setup (apt-get install chromium)`);
  check(NOTEBOOKS.length > 0, `notebooks: ${NOTEBOOKS.map((n) => n.file).join(', ')}`);
  prepareWork();
  execFileSync('go', ['build', '-o', EXPECT, './tests/e2e/expect'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  log('built tests/e2e/expect (the library values the panels must draw)');
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
    for (const nbk of NOTEBOOKS) {
      const page = await context.newPage();
      page.setDefaultTimeout(60000);
      const consoleErrors = [];
      page.on('pageerror', (e) => consoleErrors.push(String(e)));
      const shot = nbk.file.replace(/\.ipynb$/, '');
      try {
        await runNotebook(page, lab, nbk.file);
        await checkOutputs(page, nbk);
        await exercisePanel(page, nbk);
        await page.screenshot({ path: path.join(OUT, `${shot}-final.png`) });
        await saveNotebook(page);
      } catch (e) {
        await page.screenshot({ path: path.join(OUT, `${shot}-failure.png`) }).catch(() => {});
        throw e;
      }
      const panelErrors = consoleErrors.filter((e) => /fits|panel/i.test(e));
      check(panelErrors.length === 0, `no script error from the panel (${panelErrors.join('; ') || 'none'})`);
      // Shut the notebook's kernel down and close it before the next one (2 cores; JupyterLab would
      // otherwise restore it in a hidden tab).
      await page.evaluate(() => window.jupyterapp.commands.execute('kernelmenu:shutdown')).catch(() => {});
      await page.evaluate(() => window.jupyterapp.commands.execute('application:close-all')).catch(() => {});
      await page.waitForTimeout(1000);
      await page.close();
      await checkExportedHTML(context, nbk);
    }
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
