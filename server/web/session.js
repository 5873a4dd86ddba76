// kbench dashboard: the session page (#/session/{id}).
// Part of the page's classic scripts (see index.html), loaded in order;
// they share the page's global scope.
'use strict';

// ------------------------------------------------------------------
class SessionView {
  constructor(id) {
    this.id = id;
    this.title = 'Session ' + id;
    this.turnEls = new Map();   // seq -> element (turns never change once written)
    this.diffCache = new Map();
    this.sig = '';
    this.liveSig = '';
  }

  mount(root) {
    this.head = h('div', { class: 'page-head' }, h('h1', null, 'Session ', h('span', { class: 'mono' }, this.id)));
    this.banner = h('div', { class: 'verdict-banner v-none' }, 'loading…');
    this.figures = h('div', { class: 'grid figures' });
    this.charts = h('div', { class: 'grid charts' });
    this.profile = h('div', { class: 'profile-wrap' });
    this.problem = h('div');
    this.live = h('div', { class: 'live-jobs' });
    this.turnList = h('ol', { class: 'timeline', reversed: true });
    append(root, [
      this.head, this.banner, this.figures, this.charts, this.profile,
      section('Turns', { id: 'turns' },
        h('p', { class: 'muted small' }, 'Newest first. Each tool call of the session is one turn; jobs still in flight are shown on top.'),
        this.live, this.turnList),
      this.problem,
    ]);
  }

  async refresh() {
    const [sess, jobs] = await Promise.allSettled([
      api('/api/sessions/' + encodeURIComponent(this.id)),
      api('/api/jobs?page_size=20&session=' + encodeURIComponent(this.id))]);
    if (sess.status === 'rejected') {
      if (sess.reason.status === 404) {
        this.banner.className = 'verdict-banner v-none';
        fill(this.banner, h('div', { class: 'banner-title' }, 'No such session'),
          h('div', { class: 'banner-msg' }, sess.reason.message));
        return;
      }
      throw sess.reason;
    }
    const data = sess.value;
    const sig = JSON.stringify([data.session, (data.turns || []).length,
      (data.turns || []).map((t) => t.seq + ':' + (t.job ? t.job.stage : ''))]);
    if (sig !== this.sig) {
      this.sig = sig;
      this.render(data);
    }
    const inflight = jobs.status === 'fulfilled'
      ? (jobs.value.jobs || []).filter((j) => j.stage !== 'STAGE_DONE') : [];
    this.renderLive(inflight);
  }

  render(data) {
    const session = data.session || {};
    const turns = (data.turns || []).slice().sort((a, b) => num(a.seq) - num(b.seq));
    const problem = data.problem || null;
    this.renderHead(session, problem);
    this.renderBanner(turns);
    const timed = turns.filter((t) => timingOf(t.job));
    const current = timed.length ? timed[timed.length - 1] : null;
    this.renderFigures(turns, current, problem);
    this.renderCharts(timed, current);
    fill(this.profile, profileCard(latestProfile(turns)));
    this.renderTurns(turns);
    this.renderProblem(problem);
  }

  renderHead(session, problem) {
    const status = session.status || 'open';
    fill(this.head,
      h('h1', null, 'Session ', h('span', { class: 'mono' }, session.id || this.id)),
      h('p', { class: 'subtitle' },
        h('span', { class: ['badge', 'status', 'st-' + status] }, status), ' ',
        h('span', { class: 'strong' }, session.problem || 'no problem yet'),
        problem && problem.title ? ' — ' + problem.title : '',
        ' · started ' + fmtLocal(session.created_unix_ms),
        ' · last activity ' + fmtAgo(session.updated_unix_ms),
        ' · ' + num(session.turns) + ' turns'));
  }

  renderBanner(turns) {
    let t = null;
    for (const x of turns) if (x.tool === 'submit_kernel') t = x;
    const fromSubmit = !!t;
    if (!t && turns.length) t = turns[turns.length - 1];
    if (!t) {
      this.banner.className = 'verdict-banner v-none';
      fill(this.banner, h('div', { class: 'banner-title' }, 'No turn yet'));
      return;
    }
    const verdict = t.verdict || (t.job && t.job.result && t.job.result.verdict) || '';
    const name = verdictName(verdict) || 'unspecified';
    const timing = timingOf(t.job);
    this.banner.className = 'verdict-banner v-' + name.replace(/_/g, '-');
    fill(this.banner,
      h('div', { class: 'banner-kicker' }, fromSubmit ? 'latest submission' : 'last turn',
        ' · turn ' + num(t.seq) + ' · ' + t.tool),
      h('div', { class: 'banner-title' }, name === 'unspecified' ? 'no verdict' : name.replace(/_/g, ' '),
        timing ? h('span', { class: 'banner-speedup' }, fixed(num(timing.speedup), 2) + '× vs reference') : null),
      t.message ? h('div', { class: 'banner-msg' }, t.message) : null);
  }

  renderFigures(turns, current, problem) {
    const cards = [];
    const job = current ? current.job : null;
    const t = timingOf(job);
    const r = (job && job.result) || {};
    const gpu = r.gpu || {};
    if (t) {
      cards.push(section('Timing', { class: 'card timing-card' },
        h('p', { class: 'card-sub' }, 'turn ' + num(current.seq) + ' (' + current.tool + ') · shape ',
          h('span', { class: 'mono' }, (t.shape_set ? t.shape_set + '/' : '') + (t.shape || '?')),
          t.dims ? h('span', { class: 'muted mono' }, ' ' + dimsText(t.dims)) : null),
        h('div', { class: 'table-wrap' }, timingTable(t)),
        facts([
          ['speedup', h('span', { class: 'strong' }, fixed(num(t.speedup), 2) + '×')],
          ['reference', t.reference_name || '—'],
          t.expert_name ? ['expert baseline', t.expert_name +
            (num(t.speedup_vs_expert) > 0 ? ' · kernel ' + fixed(num(t.speedup_vs_expert), 2) + '× vs it' : '')] : null,
          ['L2', t.l2_flushed ? 'flushed before each sample (cold)' : 'not flushed (hot)'],
          t.stop_reason ? ['sampling', t.stop_reason] : null,
        ].filter(Boolean))));
    } else {
      cards.push(section('Timing', { class: 'card timing-card' },
        empty('No timed turn yet: profile_kernel and submit_kernel time the kernel against the reference.')));
    }

    // Precision: the latest turn with correctness trials.
    let ct = null;
    for (const x of turns) if (x.job && x.job.result && x.job.result.correctness && (x.job.result.correctness.trials || []).length) ct = x;
    if (ct) {
      const c = ct.job.result.correctness;
      // The result's tolerance, else the problem's.
      let tol = c.tolerance || {};
      if (!(num(tol.max_rel_norm) > 0 || num(tol.atol) > 0 || num(tol.rtol) > 0)) {
        tol = (problem && problem.tolerance) || tol;
      }
      const trials = c.trials || [];
      const worst = trials.reduce((a, x) => (num(x.rel_norm_error) >= num(a.rel_norm_error) ? x : a), trials[0]);
      const maxAbs = Math.max(...trials.map((x) => num(x.max_abs_error)));
      const limit = num(tol.max_rel_norm);
      const rel = num(worst.rel_norm_error);
      cards.push(section('Precision', { class: 'card precision-card' },
        h('p', { class: 'card-sub' }, 'turn ' + num(ct.seq) + ' (' + ct.tool + ') · ' + num(c.trials_passed) + ' of ' + num(c.trials_run) + ' trials passed'),
        h('div', { class: 'big-figure' }, h('span', { class: 'big-num' }, fmtSci(rel)),
          h('span', { class: 'big-unit' }, ' worst rel-norm error'),
          limit > 0 ? h('span', { class: 'muted' }, ' vs tolerance ' + fmtSci(limit)) : null),
        limit > 0 ? meter(rel / limit, fmtPct(100 * rel / limit) + ' of the tolerance', rel <= limit ? 'ok' : 'bad') : null,
        facts([
          ['worst trial', h('span', { class: 'mono' }, (worst.shape_set ? worst.shape_set + '/' : '') + (worst.shape || '?'))],
          ['max abs error', fmtSci(maxAbs)],
          ['tolerance', 'atol ' + fmtSci(tol.atol) + ' · rtol ' + fmtSci(tol.rtol) + ' · max rel-norm ' + fmtSci(tol.max_rel_norm) +
            (num(tol.norm_floor) > 0 ? ' · norm floor ' + fmtSci(tol.norm_floor) : '')],
        ])));
    } else {
      cards.push(section('Precision', { class: 'card precision-card' }, empty('No correctness trial yet.')));
    }

    if (t) {
      const km = num(t.kernel_memory_bytes), rm = num(t.reference_memory_bytes);
      const kl = num(t.kernel_launches), rl = num(t.reference_launches);
      const maxMem = Math.max(km, rm, 1);
      cards.push(section('Memory and launches', { class: 'card resources-card' },
        h('p', { class: 'card-sub' }, 'device memory each side allocates at this shape'),
        h('div', { class: 'bars' },
          h('div', { class: 'bar-row' }, h('span', { class: 'bar-name' }, 'kernel'),
            meter(km / maxMem, fmtBytes(km), 'kernel')),
          h('div', { class: 'bar-row' }, h('span', { class: 'bar-name' }, 'reference'),
            meter(rm / maxMem, fmtBytes(rm), 'reference'))),
        facts([
          ['launches', kl + ' kernel · ' + rl + ' reference'],
          ['fusion ratio', kl > 0 && rl > 0 ? h('span', { class: 'strong' }, fixed(rl / kl, 2) + '×') : '—'],
          ['memory ratio', km > 0 && rm > 0 ? (km / rm < 0.1 ? fmtPct(100 * km / rm) : fixed(km / rm, 2) + '×') + ' of the reference' : '—'],
        ])));

      const sec = num(t.kernel.median_us) * 1e-6;
      const gbps = num(t.min_bytes) > 0 ? num(t.min_bytes) / sec / 1e9 : 0;
      const tflops = num(t.flops) > 0 ? num(t.flops) / sec / 1e12 : 0;
      const copy = num(gpu.measured_copy_gbps), fp32 = num(gpu.measured_fp32_tflops);
      const rows = [];
      if (gbps > 0 && copy > 0) {
        rows.push(h('div', { class: 'bar-row' }, h('span', { class: 'bar-name' }, 'memory'),
          meter(gbps / copy, fmtPct(100 * gbps / copy) + ' · ' + sig3(gbps) + ' of ' + fixed(copy, 0) + ' GB/s', 'mem')));
      }
      if (tflops > 0 && fp32 > 0) {
        rows.push(h('div', { class: 'bar-row' }, h('span', { class: 'bar-name' }, 'compute'),
          meter(tflops / fp32, fmtPct(100 * tflops / fp32) + ' · ' + sig3(tflops) + ' of ' + fixed(fp32, 1) + ' TFLOP/s', 'compute')));
      }
      cards.push(section('Speed of light', { class: 'card sol-card' },
        h('p', { class: 'card-sub' }, 'minimum bytes and useful FLOPs over the kernel median, against the GPU\'s measured ceilings'),
        rows.length ? h('div', { class: 'bars' }, rows)
          : empty(copy > 0 ? 'The result carries no FLOP or byte counts for this shape.' : 'No measured ceilings for this GPU.'),
        facts([
          ['GPU', (gpu.name || '—') + (gpu.arch ? ' (' + gpu.arch + ')' : '')],
          ['achieved', (gbps > 0 ? sig3(gbps) + ' GB/s' : '—') + ' · ' + (tflops > 0 ? sig3(tflops) + ' TFLOP/s' : '—')],
          ['ceilings', copy > 0 ? fixed(copy, 0) + ' GB/s copy · ' + fixed(fp32, 1) + ' TFLOP/s FP32 (measured)' : '—'],
          ['problem size', fmtBytes(t.min_bytes) + ' moved at least · ' + fmtSI(num(t.flops), 'FLOP')],
        ])));
    }
    fill(this.figures, ...cards);
  }

  renderCharts(timed, current) {
    const stalls = latestStalls(timed);
    const points = [];
    const series = [];
    let gpu = null;
    for (const tr of timed) {
      const t = timingOf(tr.job);
      const isCur = tr === current;
      const med = num(t.kernel.median_us);
      if (num(t.flops) > 0 && num(t.min_bytes) > 0) {
        points.push({ ai: num(t.flops) / num(t.min_bytes), flops_per_s: num(t.flops) / (med * 1e-6),
          label: 'turn ' + num(tr.seq), current: isCur });
      }
      series.push({ seq: num(tr.seq), kernel_us: med, ref_us: num(t.reference && t.reference.median_us), current: isCur });
      if (isCur) gpu = tr.job.result.gpu || null;
    }
    if (current) {
      const t = timingOf(current.job);
      const rmed = num(t.reference && t.reference.median_us);
      if (rmed > 0 && num(t.flops) > 0 && num(t.min_bytes) > 0) {
        points.push({ ai: num(t.flops) / num(t.min_bytes), flops_per_s: num(t.flops) / (rmed * 1e-6),
          label: 'reference (turn ' + num(current.seq) + ')', ref: true });
      }
    }
    const legend = h('div', { class: 'chart-legend' },
      h('span', { class: 'key current' }, 'this kernel'), h('span', { class: 'key earlier' }, 'earlier turns'),
      h('span', { class: 'key ref' }, 'reference'), h('span', { class: 'key roof-mem' }, 'memory roof'),
      h('span', { class: 'key roof-compute' }, 'compute roof'));
    fill(this.charts,
      section('Roofline', { class: 'card chart-card', id: 'roofline' },
        h('p', { class: 'card-sub' }, gpu && gpu.name ? gpu.name + ' · measured ceilings' : 'measured ceilings of the GPU'),
        rooflineChart(points, gpu), legend),
      section('Kernel time over the session', { class: 'card chart-card', id: 'timechart' },
        h('p', { class: 'card-sub' }, 'median of each timed turn; lower is better'),
        timeChart(series),
        h('div', { class: 'chart-legend' }, h('span', { class: 'key line-kernel' }, 'kernel median'),
          h('span', { class: 'key line-ref' }, 'reference median (dashed)'))),
      section('Top warp stalls', { class: 'card chart-card', id: 'warpstalls' },
        h('p', { class: 'card-sub' }, stalls ? 'top 5 stall reasons · ' + stalls.caption : 'top 5 stall reasons of the kernel\'s warps'),
        warpStallChart(stalls && stalls.stalls)));
  }

  renderTurns(turns) {
    const kernelTurns = turns.filter((t) => KERNEL_TOOLS.has(t.tool) && t.job_id && t.source_digest);
    const prevOf = new Map();
    for (let i = 1; i < kernelTurns.length; i++) prevOf.set(kernelTurns[i].seq, kernelTurns[i - 1]);
    const els = [];
    for (const t of turns.slice().reverse()) {
      const key = num(t.seq);
      let el = this.turnEls.get(key);
      if (!el) {
        el = this.turnElement(t, prevOf.get(t.seq) || null, kernelTurns.length > 0 && kernelTurns[0] === t);
        this.turnEls.set(key, el);
      }
      els.push(el);
    }
    if (els.length === 0) {
      fill(this.turnList, h('li', { class: 'empty' }, 'No turn yet.'));
      return;
    }
    fill(this.turnList, ...els);
  }

  turnElement(t, prev, first) {
    const job = t.job || null;
    const r = (job && job.result) || {};
    const verdict = verdictName(t.verdict || r.verdict) || 'none';
    const timing = timingOf(job);
    const li = h('li', {
      class: ['turn', 'v-' + verdict.replace(/_/g, '-')],
      dataset: { seq: num(t.seq), tool: t.tool || '', verdict: verdict },
    });
    const head = h('div', { class: 'turn-head' },
      h('span', { class: 'turn-num' }, '#' + num(t.seq)),
      h('span', { class: 'turn-tool mono' }, t.tool || '?'),
      verdictName(t.verdict) && verdictName(t.verdict) !== 'unspecified' ? verdictBadge(t.verdict) : h('span', { class: 'badge v-none' }, t.job_id ? 'no verdict' : 'no job'),
      h('span', { class: 'turn-meta' },
        h('span', { title: 'duration of the tool call' }, fmtDurationMs(t.duration_ms)),
        h('span', { class: 'sep' }, '·'),
        h('span', { title: fmtLocal(t.created_unix_ms) }, fmtLocal(t.created_unix_ms)),
        t.job_id ? [h('span', { class: 'sep' }, '·'), h('span', null, 'job '), jobLink(t.job_id)] : null));
    li.appendChild(head);
    if (t.message) li.appendChild(h('div', { class: 'turn-msg' }, t.message));
    if (timing) {
      li.appendChild(h('div', { class: 'turn-figures' },
        h('span', null, 'kernel ', h('b', null, fmtUs(num(timing.kernel.median_us)))),
        h('span', null, 'reference ', h('b', null, fmtUs(num(timing.reference && timing.reference.median_us)))),
        h('span', null, 'speedup ', h('b', null, fixed(num(timing.speedup), 2) + '×'))));
    } else if (r.correctness && num(r.correctness.trials_run) > 0) {
      li.appendChild(h('div', { class: 'turn-figures' },
        h('span', null, 'trials ', h('b', null, num(r.correctness.trials_passed) + ' / ' + num(r.correctness.trials_run) + ' passed'))));
    }
    if (t.source_digest) {
      li.appendChild(lazyDetails(
        ['Kernel source ', h('span', { class: 'muted mono small' }, t.source_digest.slice(0, 12))],
        () => loadSource(t.source_digest).then((text) => preBlock(text, 'source')), 'source-details'));
    }
    if (KERNEL_TOOLS.has(t.tool) && t.job_id && t.source_digest) {
      li.appendChild(this.diffElement(t, prev, first));
    }
    return li;
  }

  diffElement(t, prev, first) {
    if (!prev) {
      return h('div', { class: 'diff-note muted small' }, first ? 'first version of the kernel in this session' : '');
    }
    if (prev.source_digest === t.source_digest) {
      return h('div', { class: 'diff-note muted small' }, 'same source as turn ' + num(prev.seq));
    }
    const summary = h('span', null, 'Diff vs turn ' + num(prev.seq) + ' ', h('span', { class: 'muted' }, '(loading…)'));
    const body = h('div', { class: 'details-body' });
    const d = h('details', { class: 'diff-details' }, h('summary', null, summary), body);
    const key = num(prev.seq) + '-' + num(t.seq);
    if (!this.diffCache.has(key)) {
      this.diffCache.set(key, api('/api/sessions/' + encodeURIComponent(this.id) + '/compare?a=' + num(prev.seq) + '&b=' + num(t.seq)));
    }
    this.diffCache.get(key).then((c) => {
      const change = num(c.kernel_time_change_pct);
      fill(summary, 'Diff vs turn ' + num(prev.seq) + ' ',
        h('span', { class: 'diff-add' }, '+' + num(c.lines_added)), ' ',
        h('span', { class: 'diff-del' }, '−' + num(c.lines_removed)),
        change !== 0 ? h('span', { class: ['muted', 'diff-time'] },
          ' · kernel time ' + (change > 0 ? '+' : '') + fixed(change, 1) + ' %') : null);
      fill(body, c.source_diff ? diffBlock(c.source_diff) : empty('The sources do not differ.'));
    }, (e) => {
      this.diffCache.delete(key);
      fill(summary, 'Diff vs turn ' + num(prev.seq) + ' ', h('span', { class: 'error-text' }, '(unavailable)'));
      fill(body, h('p', { class: 'error-text' }, e.message));
    });
    return d;
  }

  renderLive(jobs) {
    const sig = JSON.stringify(jobs.map((j) => [j.id, j.stage, j.stage_detail, j.queue_position]));
    if (sig === this.liveSig) {
      // Elapsed times still move.
      for (const el of this.live.querySelectorAll('[data-since]')) el.textContent = fmtDurationMs(Date.now() - num(el.dataset.since));
      return;
    }
    this.liveSig = sig;
    const items = jobs.slice().reverse().map((j) => h('div', {
      class: 'turn pending', dataset: { job: j.id, stage: stageName(j.stage) },
    },
    h('div', { class: 'turn-head' },
      h('span', { class: 'turn-num pending-num' }, '…'),
      h('span', { class: 'turn-tool mono' }, TOOL_OF_KIND[j.kind] || kindName(j.kind)),
      stageBadge(j.stage, j.stage_detail),
      h('span', { class: 'turn-meta' },
        h('span', { dataset: { since: num(j.created_unix_ms) } }, fmtDurationMs(Date.now() - num(j.created_unix_ms))),
        h('span', { class: 'sep' }, '·'), h('span', null, 'job '), jobLink(j.id))),
    h('div', { class: 'turn-msg muted' },
      j.stage_detail || (j.stage === 'STAGE_QUEUED' || j.stage === 'STAGE_WAITING_GPU' ? 'waiting' : 'in progress'),
      num(j.queue_position) > 0 ? ' · position ' + num(j.queue_position) + ' in the GPU queue' : '')));
    fill(this.live, ...items);
  }

  renderProblem(p) {
    if (!p) {
      fill(this.problem);
      return;
    }
    const tol = p.tolerance || {};
    const dims = (p.dims || []).map((d) => h('tr', null,
      h('td', { class: 'mono strong' }, d.name), h('td', { class: 'num' }, String(num(d.min))), h('td', { class: 'num' }, String(num(d.max))),
      h('td', { class: 'num' }, num(d.multiple_of) > 1 ? String(num(d.multiple_of)) : '—'), h('td', null, d.description || '')));
    const tensors = (p.tensors || []).map((t) => h('tr', null,
      h('td', { class: 'mono strong' }, t.name), h('td', null, enumName(t.role, 'TENSOR_ROLE_')),
      h('td', null, enumName(t.dtype, 'DTYPE_')), h('td', { class: 'mono' }, '(' + (t.shape || []).join(', ') + ')'),
      h('td', null, t.description || '')));
    fill(this.problem, section('Problem', { id: 'problem' },
      h('p', { class: 'card-sub' }, h('span', { class: 'mono strong' }, p.name || ''), p.title ? ' — ' + p.title : ''),
      h('div', { class: 'statement' }, p.statement || ''),
      p.reference_pseudocode ? [h('h3', null, 'Reference'), preBlock(p.reference_pseudocode, 'pseudo')] : null,
      dims.length ? [h('h3', null, 'Dimensions'), h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
        h('thead', null, h('tr', null, h('th', null, 'dim'), h('th', { class: 'num' }, 'min'), h('th', { class: 'num' }, 'max'),
          h('th', { class: 'num' }, 'multiple of'), h('th', null, 'meaning'))), h('tbody', null, dims)))] : null,
      tensors.length ? [h('h3', null, 'Tensors'), h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
        h('thead', null, h('tr', null, h('th', null, 'tensor'), h('th', null, 'role'), h('th', null, 'dtype'),
          h('th', null, 'shape'), h('th', null, 'meaning'))), h('tbody', null, tensors)))] : null,
      h('h3', null, 'Tolerance'),
      h('p', null, 'An element passes when |out − ref| ≤ atol + rtol·|ref| (atol ' + fmtSci(tol.atol) + ', rtol ' + fmtSci(tol.rtol) +
        '); a trial passes when every element passes and the rel-norm error ≤ ' + fmtSci(tol.max_rel_norm) +
        (num(tol.norm_floor) > 0 ? ' (the reference\'s norm floored at ' + fmtSci(tol.norm_floor) + '·√n, so that all-tiny outputs are not judged purely relatively)' : '') +
        '.')));
  }
}
