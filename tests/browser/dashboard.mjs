// Drives kbd's dashboard in headless Chromium (Debian's /usr/bin/chromium,
// through playwright-core) and checks what a person watching an agent sees:
//   1. the overview lists the session (and the worker, with its GPU links);
//   2. the session page shows the verdict banner, the timing table (in us),
//      the roofline (>= 2 points, roofs, ridge), the kernel-time chart, the
//      top-5 warp-stall bars and a timeline of >= 6 turns with a diff;
//   3. a slow job started from the page (run_correctness with the stand-in
//      runner's FAKE_SLOW_MS=2500 marker) shows up in flight and then as a
//      finished turn, without a reload;
//   4. the job page shows the raw result and the logs.
// Screenshots (PNG) go to --out. Exit status 0 when every check passes.
//
// Usage: node tests/browser/dashboard.mjs --url http://127.0.0.1:PORT/
//          --session ID --out DIR
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string' },
    session: { type: 'string' },
    out: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
if (!opts.url || !opts.session || !opts.out) {
  console.error('usage: node dashboard.mjs --url URL --session ID --out DIR');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const base = opts.url.endsWith('/') ? opts.url : opts.url + '/';
const session = opts.session;
fs.mkdirSync(opts.out, { recursive: true });

const WAIT_MS = 20000;
const sel = (attr, value) => `[${attr}=${JSON.stringify(String(value))}]`;
function ok(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
  console.log('ok   ' + what);
}
function note(what) {
  console.log('note ' + what);
}
const shot = (page, name, fullPage) =>
  page.screenshot({ path: path.join(opts.out, name), fullPage: !!fullPage, animations: 'disabled' });

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-dashboard-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: opts.chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1440, height: 900 },
  deviceScaleFactor: 1,
  locale: 'en-US',
});
const pageErrors = [];
let page = null;
let status = 0;
try {
  page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') note('console error: ' + m.text()); });

  // ---- 1. Overview.
  await page.goto(base, { waitUntil: 'load' });
  const sessionRow = '#sessions tr' + sel('data-session', session);
  await page.waitForSelector(sessionRow, { timeout: WAIT_MS });
  ok(true, 'the overview lists session ' + session);
  await page.waitForSelector('#workers tr[data-worker]', { timeout: WAIT_MS });
  ok(true, 'the overview lists the worker');
  // Its links, as the stand-in runner fakes them (KB_FAKE_TOPOLOGY=0,1,2!).
  const workerText = (await page.textContent('#workers tr[data-worker]')).replace(/\s+/g, ' ');
  ok(/links: GPU 1 \(peer access, 100 GB\/s\) · GPU 2 \(no peer access\)/.test(workerText),
    'the worker row shows its links to the host\'s other GPUs (' + workerText.trim() + ')');
  const rowText = await page.textContent(sessionRow);
  ok(/passed/.test(rowText), 'the session row shows its last verdict (' + rowText.replace(/\s+/g, ' ').trim() + ')');
  const problemRow = '#problems tr' + sel('data-problem', 'gather_linear_fp32') + sel('data-suite', 'collectives');
  await page.waitForSelector(problemRow, { timeout: WAIT_MS });
  const problemText = (await page.textContent(problemRow)).replace(/\s+/g, ' ').trim();
  ok(/1\.18×/.test(problemText), 'the overview lists the problem under its suite with its best speedup (' + problemText + ')');
  await shot(page, 'overview.png', true);

  // ---- 2. Session page, reached by clicking the row's link.
  await page.click(sessionRow + ' a');
  await page.waitForFunction((id) => location.hash === '#/session/' + encodeURIComponent(id), session);
  await page.waitForSelector('.verdict-banner.v-passed', { timeout: WAIT_MS });
  const banner = await page.textContent('.verdict-banner');
  ok(/latest submission/i.test(banner) && /passed/i.test(banner), 'the verdict banner shows the latest submission passed');
  await page.waitForFunction(() => document.querySelectorAll('#turns .turn[data-seq]').length >= 6, null, { timeout: WAIT_MS });
  const turns = await page.$$eval('#turns .turn[data-seq]', (els) => els.map((e) => e.dataset.tool));
  ok(turns.length >= 6, 'the timeline shows ' + turns.length + ' turns: ' + turns.join(', '));
  const timing = await page.textContent('table.timing');
  ok(/\d us/.test(timing) && /kernel/.test(timing) && /reference/.test(timing), 'the timing table shows kernel and reference times in us');
  ok(/kernel \(GPU time\) ← speedup/.test(timing) && /reference \(graph replay\)/.test(timing) && /kernel \(events\)/.test(timing),
    'the timing table shows each basis measured and which one the speedup uses (' + timing.replace(/\s+/g, ' ').slice(0, 200) + ')');
  const roofPts = await page.$$eval('svg.roofline circle.pt', (els) => els.length);
  ok(roofPts >= 2, 'the roofline has ' + roofPts + ' kernel points');
  ok(await page.$('svg.roofline .roof.mem') && await page.$('svg.roofline .roof.compute') && await page.$('svg.roofline .ridge'),
    'the roofline draws the memory and compute roofs and the ridge point');
  const axes = await page.$$eval('svg.roofline .axis-title', (els) => els.map((e) => e.textContent).join(' | '));
  ok(/FLOP\/byte/.test(axes) && /FLOP\/s/.test(axes), 'the roofline axes carry units (' + axes + ')');
  const kernelLine = await page.$('svg.timechart path.line.kernel');
  const refLine = await page.$('svg.timechart path.line.ref');
  ok(kernelLine && refLine, 'the kernel-time chart draws the kernel line and the dashed reference');
  const stallBars = await page.$$eval('#warpstalls svg rect.stall-bar', (els) => els.length);
  const stalls = await page.textContent('#warpstalls');
  ok(stallBars === 5 && /long_scoreboard/.test(stalls) && /46\.5 %/.test(stalls),
    'the warp-stall chart draws the top 5 reasons of the profiled turn (' + stallBars + ' bars)');
  ok(await page.$('#problem .statement'), 'the problem statement is shown');
  // The profile card: kbd's hints on the profiled turn, and its hot lines.
  const rules = await page.$$eval('#profile ul.hints li', (els) => els.map((e) => e.dataset.rule));
  ok(rules.includes('long_scoreboard') && rules.includes('uncoalesced_loads'),
    'the profile card lists the hints that fired (' + rules.join(', ') + ')');
  const hot = await page.$$eval('#profile table.hot-lines tbody tr', (els) => els.map((e) => e.textContent));
  ok(hot.length === 3 && /\+=/.test(hot[0]) && /70(\.0)? ?%/.test(hot[0]) && /14\.46/.test(hot[0]),
    'the profile card shows 3 hot source lines, the hottest at 70% with 14.46 sectors/request (' + (hot[0] || '').replace(/\s+/g, ' ') + ')');
  const card = await page.textContent('#profile');
  ok(/preset full/.test(card) && /16 replay passes/.test(card) && /headroom/.test(card) && /-bound/.test(card),
    'the profile card states the preset, the passes, the headroom and the roofline class');
  await (await page.$('#profile')).screenshot({ path: path.join(opts.out, 'profile.png') });

  // Open the last version's diff (two-stage against naive).
  const lastSubmit = await page.$$eval('#turns .turn[data-tool="submit_kernel"]', (els) => Number(els[0].dataset.seq));
  const diffSummary = '#turns .turn' + sel('data-seq', lastSubmit) + ' details.diff-details summary';
  await page.waitForSelector(diffSummary, { timeout: WAIT_MS });
  await page.waitForFunction((s) => /[+]\d+/.test(document.querySelector(s).textContent), diffSummary, { timeout: WAIT_MS });
  await page.click(diffSummary);
  const added = await page.$$eval('#turns .turn' + sel('data-seq', lastSubmit) + ' pre.diff .dl.add', (els) => els.length);
  ok(added > 0, 'turn ' + lastSubmit + "'s diff shows " + added + ' added lines in colour');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'session-top.png', false);
  await shot(page, 'session-full.png', true);
  // Close-ups of the plots, to look at.
  await (await page.$('#roofline')).screenshot({ path: path.join(opts.out, 'roofline.png') });
  await (await page.$('#timechart')).screenshot({ path: path.join(opts.out, 'timechart.png') });
  await (await page.$('#warpstalls')).screenshot({ path: path.join(opts.out, 'warpstalls.png') });

  // ---- 3. A job started while the page is open, watched without a reload.
  // A blocker job (another session) holds the only GPU worker first, so the
  // watched job must wait in the queue; the page's stages are recorded every
  // 100 ms, and the job must be seen waiting, then done.
  const before = turns.length;
  await page.evaluate(() => { window.__kbNoReload = 'same document'; });
  const naive = fs.readFileSync(path.join(repo, 'kernels/examples/gather_linear_naive.cu'), 'utf8');
  const post = (code, id) => page.evaluate(({ code, id }) => fetch('/v1/tools/run_correctness', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Kbench-Session': id },
    body: JSON.stringify({ kernel_code: code }),
  }).then((r) => r.json()), { code, id });
  const blocker = post(naive + '\n// FAKE_SLOW_MS=8000\n', 'dashboard-blocker');
  // The blocker job itself must be on the GPU (leased and running) before
  // the watched job is sent, and the worker must be the one holding it.
  // (Polled from here: waitForFunction takes the Promise of an async
  // predicate as truthy and would not wait.)
  let blockerJob = null;
  for (const deadline = Date.now() + WAIT_MS; !blockerJob && Date.now() < deadline;) {
    blockerJob = await page.evaluate(async () => {
      const j = await (await fetch('/api/jobs?session=dashboard-blocker&stage=running')).json();
      const job = (j.jobs || [])[0];
      if (!job) return null;
      const w = await (await fetch('/api/workers')).json();
      return (w.workers || []).some((x) => x.current_job_id === job.id) ? job.id : null;
    });
    if (!blockerJob) await new Promise((r) => setTimeout(r, 100));
  }
  ok(!!blockerJob, 'the blocker job ' + blockerJob + ' holds the only worker');
  await page.evaluate(() => {
    window.__kbStages = [];
    window.__kbStageTimer = setInterval(() => {
      const p = document.querySelector('#turns .turn.pending');
      const st = p ? p.getAttribute('data-stage') : 'none';
      const last = window.__kbStages[window.__kbStages.length - 1];
      if (st !== last) window.__kbStages.push(st);
    }, 100);
  });
  const watched = post(naive + '\n// FAKE_SLOW_MS=1500\n', session);
  await page.waitForSelector('#turns .turn.pending', { timeout: WAIT_MS });
  note('the session page shows the new job in flight (stage ' +
    await page.getAttribute('#turns .turn.pending', 'data-stage') + '); the blocker holds the GPU for 8 s');
  try {
    await page.waitForSelector('#turns .turn.pending[data-stage="running"]', { timeout: 8000 });
    const detail = await page.textContent('#turns .turn.pending .turn-msg');
    note('seen running on the session page: ' + detail.trim());
    await page.$eval('#turns', (e) => e.scrollIntoView());
    await shot(page, 'session-running.png', false);
  } catch (e) {
    note('the job was not seen in the running stage on the session page');
  }
  // The overview in a second tab, while the job runs (best effort: 2.5 s).
  const overview = await context.newPage();
  try {
    await overview.goto(base, { waitUntil: 'load' });
    await overview.waitForSelector('#jobs tr[data-stage="running"], #jobs tr[data-stage="queued"], #jobs tr[data-stage="waiting_gpu"], #workers tr.busy',
      { timeout: 3000 });
    note('the overview shows the job in flight or the GPU busy');
    await shot(overview, 'overview-running.png', true);
  } catch (e) {
    note('the job finished before the overview could show it in flight');
  } finally {
    await overview.close();
  }
  await page.waitForFunction((n) => document.querySelectorAll('#turns .turn[data-seq]').length > n &&
      document.querySelectorAll('#turns .turn.pending').length === 0, before, { timeout: 30000 });
  const newest = await page.$eval('#turns .turn[data-seq]', (e) => ({ ...e.dataset }));
  ok(Number(newest.seq) === before + 1 && newest.tool === 'run_correctness' && newest.verdict === 'passed',
    'the timeline shows the new turn #' + newest.seq + ' (' + newest.tool + ', ' + newest.verdict + ')');
  ok(await page.evaluate(() => window.__kbNoReload) === 'same document', 'the page was not reloaded');
  const stages = await page.evaluate(() => { clearInterval(window.__kbStageTimer); return window.__kbStages; });
  if (!stages.includes('waiting_gpu') && !stages.includes('queued')) {
    // What the service said about both jobs, to tell a scheduling bug from
    // a page that missed the waiting stage.
    const jobs = await page.evaluate(async () => (await (await fetch('/api/jobs?page_size=5')).json()).jobs);
    for (const j of jobs || []) {
      note('job ' + j.id + ' session ' + j.session_id + ' stage ' + j.stage + ' created ' + j.created_unix_ms +
        ' updated ' + j.updated_unix_ms + ' finished ' + j.finished_unix_ms + ' attempts ' + j.attempts +
        ' worker ' + j.worker_id + ' detail ' + j.stage_detail);
    }
  }
  ok(stages.includes('waiting_gpu') || stages.includes('queued'),
    'the page showed the job waiting, then done, without a reload (stages seen: ' + stages.join(' → ') + ')');
  ok((await blocker).isError === false, 'the blocker job finished');
  const reply = await watched;
  ok(reply && reply.isError === false && reply.structuredContent && reply.structuredContent.id,
    'the tool call returned job ' + (reply && reply.structuredContent && reply.structuredContent.id));
  const jobId = reply.structuredContent.id;

  // ---- 4. Job page, from the new turn's job link.
  await page.click('#turns .turn' + sel('data-seq', newest.seq) + ' a[href^="#/job/"]');
  await page.waitForSelector('#raw pre.json', { timeout: WAIT_MS });
  ok(await page.evaluate(() => location.hash) === '#/job/' + encodeURIComponent(jobId), 'the turn links to its job page');
  const raw = JSON.parse(await page.textContent('#raw pre.json'));
  ok(raw.verdict === 'VERDICT_PASSED', 'the job page shows the raw result as JSON');
  const logs = await page.textContent('#logs');
  ok(/kb_fake_runner/.test(logs), 'the job page shows the result log');
  await shot(page, 'job.png', true);

  // The session page on a phone-sized screen, to look at.
  await page.setViewportSize({ width: 420, height: 900 });
  await page.goto(base + '#/session/' + encodeURIComponent(session), { waitUntil: 'load' });
  await page.waitForSelector('svg.roofline', { timeout: WAIT_MS });
  await shot(page, 'session-narrow.png', false);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  ok(overflow <= 0, 'the session page fits a 420 px wide screen (overflow ' + overflow + ' px)');

  ok(await page.evaluate(() => document.scripts.length) === 7, 'no script element was added to the page (7 scripts)');
  ok(pageErrors.length === 0, 'no uncaught error in the page' + (pageErrors.length ? ': ' + pageErrors.join('; ') : ''));
} catch (e) {
  status = 1;
  console.error('FAIL ' + e.message);
  if (pageErrors.length) console.error('page errors: ' + pageErrors.join('; '));
  if (page) {
    try { await shot(page, 'failure.png', true); } catch (e2) { /* the page is gone */ }
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(status);
