// kbench dashboard: shared blocks and the overview page (#/).
// Part of the page's classic scripts (see index.html), loaded in order;
// they share the page's global scope.
'use strict';

// ------------------------------------------------------------------
// Shared blocks.

// The links a worker measured at its start to its host's other GPUs
// (GpuLink): which it reaches with peer access, and the measured copy
// bandwidth; gangs of a job that spans GPUs form only among linked GPUs.
function gpuLinks(links) {
  if (!links || links.length === 0) return null;
  const parts = links.map((l) => 'GPU ' + num(l.peer_gpu_index) + (l.peer_access
    ? ' (peer access, ' + fixed(num(l.copy_gbps), 0) + ' GB/s)'
    : ' (no peer access)'));
  return h('div', { class: 'muted small links', title: 'links to the other GPUs of this host, measured when the worker started' },
    'links: ' + parts.join(' · '));
}

function statsRow(name, s) {
  s = s || {};
  return h('tr', null,
    h('th', { scope: 'row' }, name),
    h('td', { class: 'num' }, fmtUs(num(s.mean_us))),
    h('td', { class: 'num strong' }, fmtUs(num(s.median_us))),
    h('td', { class: 'num' }, fmtUs(num(s.std_us))),
    h('td', { class: 'num' }, fmtUs(num(s.min_us))),
    h('td', { class: 'num' }, fmtUs(num(s.max_us))),
    h('td', { class: 'num' }, String(num(s.n))));
}

// The bases a TimingReport may hold: its field prefix, its label and the
// TimingBasis value that names it as the speedup's basis.
const TIMING_BASES = [
  ['', 'events', 'TIMING_BASIS_EVENTS'],
  ['_gpu', 'GPU time', 'TIMING_BASIS_GPU_TIME'],
  ['_graph', 'graph replay', 'TIMING_BASIS_GRAPH'],
];

// The basis the speedup is computed on ("GPU time", "events"), or ''.
function speedupBasis(t) {
  const b = TIMING_BASES.find((x) => x[2] === t.speedup_basis);
  return b ? b[1] : '';
}

// Kernel and reference rows for every basis the report holds (events
// always; GPU time and graph replay where measured), the speedup's basis
// marked.
function timingTable(t) {
  const measured = (suffix) => !!t['kernel' + suffix] && num(t['kernel' + suffix].n) > 0;
  const several = TIMING_BASES.some(([suffix]) => suffix && measured(suffix));
  const rows = [];
  for (const [suffix, label, basis] of TIMING_BASES) {
    if (suffix && !measured(suffix)) continue;
    const k = t['kernel' + suffix];
    const tag = several ? ' (' + label + ')' : '';
    const mark = t.speedup_basis === basis ? ' ← speedup' : '';
    rows.push(statsRow('kernel' + tag + mark, k), statsRow('reference' + tag, t['reference' + suffix]));
    // The problem's expert baseline, where it has one and this basis timed it.
    const e = t['expert' + suffix];
    if (e && num(e.n) > 0) rows.push(statsRow('expert baseline' + tag, e));
  }
  return h('table', { class: 'data timing' },
    h('thead', null, h('tr', null,
      h('th', null, ''), h('th', { class: 'num' }, 'mean'), h('th', { class: 'num' }, 'median'),
      h('th', { class: 'num' }, 'std'), h('th', { class: 'num' }, 'min'), h('th', { class: 'num' }, 'max'),
      h('th', { class: 'num' }, 'n'))),
    h('tbody', null, rows));
}

// Each rank's own medians, for a problem that spans GPUs; null without.
// `workers` are the gang's worker ids by rank (Job.gang_worker_ids).
function rankTable(t, workers) {
  const ranks = t.ranks || [];
  if (!ranks.length) return null;
  const median = (s) => (s && num(s.n) > 0 ? fmtUs(num(s.median_us)) : '—');
  return h('table', { class: 'data compact ranks' },
    h('thead', null, h('tr', null,
      h('th', null, 'rank'), h('th', null, 'worker'),
      h('th', { class: 'num' }, 'kernel (GPU time)'), h('th', { class: 'num' }, 'reference (GPU time)'),
      h('th', { class: 'num' }, 'kernel (events)'), h('th', { class: 'num' }, 'reference (events)'))),
    h('tbody', null, ranks.map((r) => h('tr', null,
      h('td', null, String(num(r.rank))),
      h('td', { class: 'mono small' }, (workers || [])[num(r.rank)] || '—'),
      h('td', { class: 'num' }, median(r.kernel_gpu)), h('td', { class: 'num' }, median(r.reference_gpu)),
      h('td', { class: 'num' }, median(r.kernel)), h('td', { class: 'num' }, median(r.reference))))));
}

function dimsText(dims) {
  if (!dims) return '';
  return Object.entries(dims).map(([k, v]) => k + '=' + v).join(' ');
}

// A horizontal meter: value against max, with a text label.
function meter(fraction, label, cls) {
  const pct = Math.max(0, Math.min(1, fraction)) * 100;
  return h('div', { class: ['meter', cls] },
    h('div', { class: 'meter-track' }, h('div', { class: 'meter-fill', style: 'width:' + pct.toFixed(1) + '%' })),
    h('span', { class: 'meter-label' }, label));
}

function preBlock(text, cls) {
  return h('pre', { class: ['code', cls] }, text);
}

function diffBlock(text) {
  const pre = h('pre', { class: 'code diff' });
  const lines = String(text || '').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    let cls = 'ctx';
    if (line.startsWith('+++') || line.startsWith('---')) cls = 'file';
    else if (line.startsWith('@@')) cls = 'hunk';
    else if (line.startsWith('+')) cls = 'add';
    else if (line.startsWith('-')) cls = 'del';
    pre.appendChild(h('span', { class: 'dl ' + cls }, line + '\n'));
  }
  return pre;
}

// Shows a <details> whose body is loaded the first time it is opened.
function lazyDetails(summary, load, cls) {
  const body = h('div', { class: 'details-body' }, h('p', { class: 'muted' }, 'loading…'));
  const d = h('details', { class: cls }, h('summary', null, summary), body);
  let loaded = false;
  d.addEventListener('toggle', () => {
    if (!d.open || loaded) return;
    loaded = true;
    load().then((node) => fill(body, node),
      (e) => { loaded = false; fill(body, h('p', { class: 'error-text' }, e.message)); });
  });
  return d;
}

const sourceCache = new Map();
function loadSource(digest) {
  if (!sourceCache.has(digest)) {
    const p = api('/api/sources/' + encodeURIComponent(digest)).then((r) => r.text || '');
    p.catch(() => sourceCache.delete(digest));
    sourceCache.set(digest, p);
  }
  return sourceCache.get(digest);
}

// ------------------------------------------------------------------
// Views. Each has mount(root) once and refresh() per poll; refresh
// rejects with an ApiError when the API cannot be read.

class OverviewView {
  constructor() {
    this.title = 'Overview';
    this.sig = {};
  }

  mount(root) {
    this.workersBox = h('div', null, h('p', { class: 'muted' }, 'loading…'));
    this.jobsBox = h('div', null, h('p', { class: 'muted' }, 'loading…'));
    this.sessionsBox = h('div', null, h('p', { class: 'muted' }, 'loading…'));
    this.problemsBox = h('div', null, h('p', { class: 'muted' }, 'loading…'));
    this.stats = h('div', { class: 'stat-strip' });
    append(root, [
      h('div', { class: 'page-head' }, h('h1', null, 'Overview'),
        h('p', { class: 'subtitle' }, 'GPU workers, the job queue and agent sessions of this kbd')),
      this.stats,
      section('Queue and workers', { id: 'workers' }, this.workersBox),
      section('Sessions', { id: 'sessions' }, this.sessionsBox),
      section('Problems by suite', { id: 'problems' }, this.problemsBox),
      section('Recent jobs', { id: 'jobs' }, this.jobsBox),
    ]);
  }

  changed(key, data) {
    const s = JSON.stringify(data);
    if (this.sig[key] === s) return false;
    this.sig[key] = s;
    return true;
  }

  async refresh() {
    const [w, j, s, p] = await Promise.allSettled([
      api('/api/workers'), api('/api/jobs?page_size=12'), api('/api/sessions?limit=50'),
      api('/api/problems')]);
    if (w.status === 'fulfilled') {
      if (this.changed('w', w.value)) this.renderWorkers(w.value);
    } else {
      fill(this.workersBox, h('p', { class: 'error-text' }, w.reason.message));
    }
    if (j.status === 'fulfilled') {
      if (this.changed('j', j.value)) fill(this.jobsBox, jobsTable(j.value.jobs || [], true));
    } else {
      fill(this.jobsBox, h('p', { class: 'error-text' }, j.reason.message));
    }
    if (s.status === 'fulfilled') {
      if (this.changed('s', s.value)) this.renderSessions(s.value.sessions || []);
    } else {
      fill(this.sessionsBox, h('p', { class: 'error-text' }, s.reason.message));
    }
    if (p.status === 'fulfilled') {
      const sessions = s.status === 'fulfilled' ? (s.value.sessions || []) : [];
      if (this.changed('p', [p.value, sessions])) this.renderProblems(p.value, sessions);
    } else {
      fill(this.problemsBox, h('p', { class: 'error-text' }, p.reason.message));
    }
    if (w.status === 'fulfilled' || j.status === 'fulfilled') {
      this.renderStats(w.status === 'fulfilled' ? w.value : null, j.status === 'fulfilled' ? j.value : null);
    }
    if (w.status === 'rejected' && j.status === 'rejected' && s.status === 'rejected') throw w.reason;
  }

  renderStats(w, j) {
    const workers = (w && w.workers) || [];
    const busy = workers.filter((x) => x.busy).length;
    const jpm = workers.reduce((a, x) => a + num(x.jobs_per_minute), 0);
    const stat = (label, value, cls) => h('div', { class: ['stat', cls] },
      h('div', { class: 'stat-value' }, value), h('div', { class: 'stat-label' }, label));
    fill(this.stats,
      stat('queue depth', w ? String(num(w.queue_depth)) : '—', 'queue'),
      stat('GPUs busy', w ? busy + ' / ' + workers.length : '—'),
      stat('jobs per minute', w ? fixed(jpm, 1) : '—'),
      stat('jobs in flight', j ? String((j.jobs || []).filter((x) => x.stage !== 'STAGE_DONE').length) : '—'));
  }

  renderWorkers(w) {
    const workers = w.workers || [];
    if (workers.length === 0) {
      fill(this.workersBox, empty('No GPU worker is connected. Start kbworker (or kbd --local-worker) to run kernels.'));
      return;
    }
    const rows = workers.map((x) => h('tr', { class: x.busy ? 'busy' : 'idle', dataset: { worker: x.worker_id || '' } },
      h('td', null, h('div', { class: 'strong' }, (x.hostname || '?') + ' · GPU ' + num(x.gpu_index)),
        h('div', { class: 'muted small mono' }, x.worker_id || ''),
        x.host_id ? h('div', { class: 'muted small mono', title: 'host id: the same for every GPU of one host' }, x.host_id) : null),
      h('td', null, (x.spec && x.spec.name) || '—',
        x.spec && x.spec.arch ? h('div', { class: 'muted small' }, x.spec.arch) : null,
        gpuLinks(x.links)),
      h('td', null, h('span', { class: ['badge', x.busy ? 'busy' : 'idle'] }, x.busy ? 'busy' : 'idle')),
      h('td', null, x.busy || x.current_job_id ? jobLink(x.current_job_id) : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'num' }, String(num(x.jobs_done))),
      h('td', { class: 'num' }, fixed(num(x.jobs_per_minute), 1)),
      h('td', { class: 'num' }, fmtDurationMs(num(x.busy_seconds) * 1000)),
      h('td', { class: 'num muted' }, fmtAgo(x.last_seen_unix_ms))));
    fill(this.workersBox, h('div', { class: 'table-wrap' }, h('table', { class: 'data workers' },
      h('thead', null, h('tr', null, h('th', null, 'worker'), h('th', null, 'GPU'), h('th', null, 'state'),
        h('th', null, 'current job'), h('th', { class: 'num' }, 'jobs done'), h('th', { class: 'num' }, 'jobs / min'),
        h('th', { class: 'num' }, 'busy time'), h('th', { class: 'num' }, 'last seen'))),
      h('tbody', null, rows))));
  }

  // One table per suite (a problem of several suites is in each), with the
  // best speedup of the listed sessions on each problem; then the problem
  // files kbd refused at start.
  renderProblems(list, sessions) {
    const problems = list.problems || [];
    const best = new Map();
    const count = new Map();
    for (const s of sessions) {
      if (!s.problem) continue;
      count.set(s.problem, (count.get(s.problem) || 0) + 1);
      best.set(s.problem, Math.max(best.get(s.problem) || 0, num(s.best_speedup)));
    }
    const suites = (list.suites || []).slice();
    if (problems.some((x) => !(x.suites || []).length)) suites.push('');
    const tables = suites.map((suite) => {
      const rows = problems.filter((x) => suite ? (x.suites || []).includes(suite) : !(x.suites || []).length)
        .map((x) => h('tr', { dataset: { problem: x.name, suite: suite } },
          h('td', null, h('div', { class: 'strong mono' }, x.name), h('div', { class: 'muted small' }, x.title || '')),
          h('td', { class: 'num' }, String(count.get(x.name) || 0)),
          h('td', { class: 'num strong' }, (best.get(x.name) || 0) > 0 ? fixed(best.get(x.name), 2) + '×' : '—')));
      return h('div', { class: 'table-wrap' },
        h('h3', null, suite || '(no suite)'),
        h('table', { class: 'data problems' },
          h('thead', null, h('tr', null, h('th', null, 'problem'), h('th', { class: 'num' }, 'sessions'),
            h('th', { class: 'num' }, 'best speedup'))),
          h('tbody', null, rows)));
    });
    const refused = (list.refused || []).map((r) => h('li', { class: 'mono small', dataset: { refused: r.file } }, r.error));
    fill(this.problemsBox,
      problems.length ? tables : empty('No problem is loaded.'),
      refused.length ? h('div', null, h('p', { class: 'error-text' }, 'Refused at kbd start:'), h('ul', null, refused)) : null,
      h('p', { class: 'muted small' }, 'Best speedup among the sessions listed above.'));
  }

  renderSessions(sessions) {
    if (sessions.length === 0) {
      fill(this.sessionsBox, empty('No session yet. Tool calls made with a session id (X-Kbench-Session) appear here.'));
      return;
    }
    const rows = sessions.map((s) => {
      const href = '#/session/' + encodeURIComponent(s.id);
      const tr = h('tr', { class: 'clickable', dataset: { session: s.id } },
        h('td', null, h('a', { class: 'mono', href: href }, s.id)),
        h('td', null, s.problem || h('span', { class: 'muted' }, '—')),
        h('td', null, h('span', { class: ['badge', 'status', 'st-' + (s.status || 'open')] }, s.status || 'open')),
        h('td', { class: 'nowrap' }, fmtLocal(s.created_unix_ms)),
        h('td', { class: 'num' }, String(num(s.turns))),
        h('td', { class: 'num strong' }, num(s.best_speedup) > 0 ? fixed(num(s.best_speedup), 2) + '×' : '—'),
        h('td', null, verdictBadge(s.last_verdict), s.last_tool ? h('span', { class: 'muted small tool-after' }, s.last_tool) : null));
      tr.addEventListener('click', (ev) => {
        if (ev.target.closest('a')) return;
        location.hash = href;
      });
      return tr;
    });
    fill(this.sessionsBox, h('div', { class: 'table-wrap' }, h('table', { class: 'data sessions' },
      h('thead', null, h('tr', null, h('th', null, 'session'), h('th', null, 'problem'), h('th', null, 'status'),
        h('th', null, 'started'), h('th', { class: 'num' }, 'turns'), h('th', { class: 'num' }, 'best speedup'),
        h('th', null, 'last verdict'))),
      h('tbody', null, rows))));
  }
}

function jobsTable(jobs, withSession) {
  if (jobs.length === 0) return empty('No job yet.');
  const rows = jobs.map((j) => {
    const r = j.result || {};
    return h('tr', { dataset: { job: j.id, stage: stageName(j.stage) } },
      h('td', null, jobLink(j.id)),
      h('td', null, TOOL_OF_KIND[j.kind] || kindName(j.kind)),
      h('td', null, stageBadge(j.stage, j.stage_detail),
        j.stage !== 'STAGE_DONE' && j.stage_detail ? h('span', { class: 'muted small stage-detail' }, j.stage_detail) : null,
        num(j.queue_position) > 0 && j.stage !== 'STAGE_DONE' ? h('span', { class: 'muted small' }, ' #' + num(j.queue_position) + ' in queue') : null),
      h('td', null, j.stage === 'STAGE_DONE' ? verdictBadge(r.verdict) : h('span', { class: 'muted' }, '…')),
      withSession ? h('td', null, sessionLink(j.session_id)) : null,
      h('td', null, j.problem || '—'),
      h('td', { class: 'nowrap muted' }, fmtLocal(j.created_unix_ms)));
  });
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data jobs' },
    h('thead', null, h('tr', null, h('th', null, 'job'), h('th', null, 'tool'), h('th', null, 'stage'),
      h('th', null, 'verdict'), withSession ? h('th', null, 'session') : null, h('th', null, 'problem'),
      h('th', null, 'created'))),
    h('tbody', null, rows)));
}
