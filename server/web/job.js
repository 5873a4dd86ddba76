// kbench dashboard: the job page (#/job/{id}).
// Part of the page's classic scripts (see index.html), loaded in order;
// they share the page's global scope.
'use strict';

// ------------------------------------------------------------------
class JobView {
  constructor(id) {
    this.id = id;
    this.title = 'Job ' + id;
    this.sig = '';
    this.done = false;
  }

  mount(root) {
    this.root = h('div', null, h('div', { class: 'page-head' }, h('h1', null, 'Job ', h('span', { class: 'mono' }, this.id))),
      h('p', { class: 'muted' }, 'loading…'));
    root.appendChild(this.root);
  }

  async refresh() {
    if (this.done) return;
    let data;
    try {
      data = await api('/api/jobs/' + encodeURIComponent(this.id));
    } catch (e) {
      if (e.status === 404) {
        fill(this.root, h('div', { class: 'page-head' }, h('h1', null, 'Job ', h('span', { class: 'mono' }, this.id))),
          h('div', { class: 'verdict-banner v-none' }, h('div', { class: 'banner-title' }, 'No such job'),
            h('div', { class: 'banner-msg' }, e.message)));
        return;
      }
      throw e;
    }
    const job = data.job || {};
    const sig = JSON.stringify([job.stage, job.stage_detail, job.updated_unix_ms, job.queue_position]);
    if (sig === this.sig) return;
    this.sig = sig;
    this.done = job.stage === 'STAGE_DONE';
    this.render(job, data.source || '');
  }

  render(job, source) {
    const r = job.result || {};
    const done = job.stage === 'STAGE_DONE';
    const verdict = verdictName(r.verdict) || 'none';
    const tool = TOOL_OF_KIND[job.kind] || kindName(job.kind);
    const parts = [];
    parts.push(h('div', { class: 'page-head' },
      h('h1', null, 'Job ', h('span', { class: 'mono' }, job.id || this.id)),
      h('p', { class: 'subtitle' }, h('span', { class: 'mono strong' }, tool), ' · ', stageBadge(job.stage, job.stage_detail),
        job.session_id ? [' · session ', sessionLink(job.session_id)] : null)));
    if (done) {
      parts.push(h('div', { class: 'verdict-banner v-' + verdict.replace(/_/g, '-') },
        h('div', { class: 'banner-kicker' }, tool + ' result'),
        h('div', { class: 'banner-title' }, verdict === 'none' || verdict === 'unspecified' ? 'no verdict' : verdict.replace(/_/g, ' ')),
        r.message || (r.error && r.error.message) ? h('div', { class: 'banner-msg' }, r.message || r.error.message) : null));
    } else {
      parts.push(h('div', { class: 'verdict-banner v-running' },
        h('div', { class: 'banner-kicker' }, tool),
        h('div', { class: 'banner-title' }, stageName(job.stage).replace(/_/g, ' ') || 'pending'),
        h('div', { class: 'banner-msg' }, job.stage_detail || 'waiting',
          num(job.queue_position) > 0 ? ' · position ' + num(job.queue_position) + ' in the GPU queue' : '')));
    }
    parts.push(section('Job', { id: 'job-facts' }, facts([
      ['problem', job.problem || '—'],
      ['shape set', job.shape_set || '—'],
      ['file', job.filename || '—'],
      ['worker', job.worker_id || r.worker_id || '—'],
      ...(Array.isArray(job.gang_worker_ids) && job.gang_worker_ids.length > 1
        ? [['ranks', job.gang_worker_ids.map((w, i) => 'rank ' + i + ': ' + w).join(' · ')]]
        : []),
      ['GPU', r.gpu && r.gpu.name ? r.gpu.name + (r.gpu.arch ? ' (' + r.gpu.arch + ')' : '') : '—'],
      ['attempts', String(num(job.attempts))],
      ['created', fmtLocal(job.created_unix_ms)],
      ['finished', done ? fmtLocal(job.finished_unix_ms) : '—'],
      ['runner time', num(r.runner_ms) > 0 ? fmtDurationMs(r.runner_ms) : '—'],
      ['source digest', h('span', { class: 'mono small' }, job.source_digest || '—')],
    ], 'wide')));
    const t = timingOf(job);
    if (t) {
      const ranks = rankTable(t, job.gang_worker_ids);
      parts.push(section('Timing', null, h('div', { class: 'table-wrap' }, timingTable(t)),
        ranks ? h('div', { class: 'table-wrap' }, h('h3', null, "Each rank's own span"), ranks) : null,
        facts([
          ['speedup', fixed(num(t.speedup), 2) + '×' + (speedupBasis(t) ? ' (' + speedupBasis(t) + ')' : '')],
          ['shape', (t.shape_set || '') + '/' + (t.shape || '') + ' ' + dimsText(t.dims)],
        ].concat(t.gpu_time_note ? [['note', t.gpu_time_note]] : []))));
    }
    const c = r.correctness;
    if (c && (c.trials || []).length) {
      parts.push(section('Correctness', null, h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
        h('thead', null, h('tr', null, h('th', null, 'shape'), h('th', null, 'result'), h('th', { class: 'num' }, 'max abs error'),
          h('th', { class: 'num' }, 'max rel error'), h('th', { class: 'num' }, 'rel-norm error'), h('th', { class: 'num' }, 'mismatches'),
          h('th', null, 'first mismatch'))),
        h('tbody', null, c.trials.map((x) => h('tr', null,
          h('td', { class: 'mono' }, (x.shape_set ? x.shape_set + '/' : '') + (x.shape || '')),
          h('td', null, h('span', { class: ['badge', x.passed ? 'v-passed' : 'v-failed'] }, x.passed ? 'passed' : 'failed')),
          h('td', { class: 'num' }, fmtSci(x.max_abs_error)), h('td', { class: 'num' }, fmtSci(x.max_rel_error)),
          h('td', { class: 'num' }, fmtSci(x.rel_norm_error)), h('td', { class: 'num' }, String(num(x.mismatches))),
          h('td', { class: 'mono small' }, x.first_mismatch || '—'))))))));
    }
    const p = r.profile;
    if (p && (p.launches || []).length) {
      parts.push(section('Profile', null, h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
        h('thead', null, h('tr', null, h('th', null, 'launch'), h('th', null, 'grid × block'), h('th', { class: 'num' }, 'registers'),
          h('th', { class: 'num' }, 'median'), h('th', { class: 'num' }, 'share'), h('th', { class: 'num' }, 'occupancy'),
          h('th', { class: 'num' }, 'waves'))),
        h('tbody', null, p.launches.map((l) => h('tr', null,
          h('td', { class: 'mono' }, l.entry || '?'),
          h('td', { class: 'mono' }, '(' + (l.grid || []).join(',') + ') × (' + (l.block || []).join(',') + ')'),
          h('td', { class: 'num' }, String(num(l.registers))), h('td', { class: 'num' }, fmtUs(num(l.time && l.time.median_us))),
          h('td', { class: 'num' }, fmtPct(num(l.share_pct))), h('td', { class: 'num' }, fmtPct(num(l.theoretical_occupancy_pct))),
          h('td', { class: 'num' }, fixed(num(l.waves), 2)))))))));
    }
    const comp = r.compile;
    const logs = [];
    if (comp && (comp.diagnostics || []).length) {
      logs.push(h('h3', null, 'Compile diagnostics'), h('div', { class: 'table-wrap' }, h('table', { class: 'data compact diagnostics' },
        h('thead', null, h('tr', null, h('th', { class: 'num' }, 'line'), h('th', null, 'severity'), h('th', null, 'message'))),
        h('tbody', null, comp.diagnostics.map((d) => h('tr', { class: 'sev-' + (d.severity || 'error') },
          h('td', { class: 'num' }, num(d.line) > 0 ? String(num(d.line)) : '—'),
          h('td', null, d.severity || ''), h('td', { class: 'mono' }, d.message || '')))))));
    }
    if (comp && comp.log) logs.push(h('h3', null, 'Compile log'), preBlock(comp.log, 'log'));
    if (comp && !comp.log && !(comp.diagnostics || []).length) {
      logs.push(h('h3', null, 'Compile'), h('p', { class: 'muted' },
        (comp.success ? 'Compiled' : 'Did not compile') + (comp.arch ? ' for ' + comp.arch : '') +
        (num(comp.compile_ms) > 0 ? ' in ' + fmtDurationMs(comp.compile_ms) : '') + '; the compiler reported no diagnostics.'));
    }
    logs.push(h('h3', null, 'Result log'), r.log ? preBlock(r.log, 'log') : empty(done ? 'The result has no log.' : 'Not finished yet.'));
    parts.push(section('Logs', { id: 'logs' }, logs));
    if (source) {
      parts.push(section('Kernel source', { id: 'source' },
        h('details', null, h('summary', null, 'Show the source (' + source.split('\n').length + ' lines)'), preBlock(source, 'source'))));
    }
    parts.push(section('Raw result', { id: 'raw' },
      h('p', { class: 'card-sub' }, 'job.result as the API returns it (protobuf JSON)'),
      preBlock(JSON.stringify(done ? r : job, null, 2), 'json')));
    fill(this.root, ...parts);
  }
}
