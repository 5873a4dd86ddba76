// kbench dashboard: a single-page app over kbd's JSON API (/api/...).
// Plain JavaScript, no framework, nothing loaded from elsewhere. Routes:
//   #/              queue and workers, recent jobs, sessions
//   #/session/{id}  one agent session: verdict, figures, plots, turns
//   #/job/{id}      one job: result, logs, raw JSON
// Views poll the API about once a second while the tab is visible.
// Every string from the API reaches the DOM as a text node or through
// textContent, never parsed as markup.
'use strict';

(function () {
  const POLL_MS = 1000;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const KERNEL_TOOLS = new Set(['compile_kernel', 'run_correctness',
    'profile_kernel', 'submit_kernel']);
  const TOOL_OF_KIND = {
    JOB_KIND_COMPILE: 'compile_kernel',
    JOB_KIND_CORRECTNESS: 'run_correctness',
    JOB_KIND_PROFILE: 'profile_kernel',
    JOB_KIND_SUBMIT: 'submit_kernel',
  };

  // ------------------------------------------------------------------
  // DOM helpers. Children: strings become text nodes; null, undefined and
  // false are skipped; arrays are flattened.
  function append(node, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) {
        append(node, c);
      } else if (c instanceof Node) {
        node.appendChild(c);
      } else {
        node.appendChild(document.createTextNode(String(c)));
      }
    }
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return node;
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') {
        node.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
      } else if (k.startsWith('on') && typeof v === 'function') {
        node.addEventListener(k.slice(2), v);
      } else if (k === 'dataset') {
        for (const [dk, dv] of Object.entries(v)) node.dataset[dk] = String(dv);
      } else {
        node.setAttribute(k, v === true ? '' : String(v));
      }
    }
    return node;
  }

  // Replaces the children of `node` (same child rules as append).
  function fill(node, ...children) {
    node.replaceChildren();
    return append(node, children);
  }

  function h(tag, attrs, ...children) {
    return append(setAttrs(document.createElement(tag), attrs), children);
  }

  function svg(tag, attrs, ...children) {
    return append(setAttrs(document.createElementNS(SVG_NS, tag), attrs), children);
  }

  // ------------------------------------------------------------------
  // Formatting. int64 fields arrive as JSON strings (protobuf's mapping).
  function num(v) {
    if (v === null || v === undefined || v === '') return 0;
    const n = Number(v);
    return Number.isFinite(n) ? n : 0;
  }

  function fixed(v, digits) {
    return v.toLocaleString('en-US', {
      minimumFractionDigits: digits, maximumFractionDigits: digits,
    });
  }

  // Microseconds with a precision that suits the size.
  function fmtUs(us) {
    if (!(us > 0)) return '—';
    const digits = us < 10 ? 3 : us < 100 ? 2 : us < 10000 ? 1 : 0;
    return fixed(us, digits) + ' us';
  }

  function fmtDurationMs(ms) {
    ms = num(ms);
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return fixed(ms / 1000, ms < 10000 ? 2 : 1) + ' s';
    const m = Math.floor(ms / 60000);
    return m + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
  }

  function fmtBytes(b) {
    b = num(b);
    if (!(b > 0)) return '—';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i === 0 ? String(b) : fixed(b, b < 10 ? 2 : b < 100 ? 1 : 0)) + ' ' + units[i];
  }

  // 3 significant digits with an SI prefix: fmtSI(2.5e12, 'FLOP/s').
  function fmtSI(v, unit) {
    if (!(v > 0)) return '—';
    const prefixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
    let e = Math.floor(Math.log10(v) / 3);
    e = Math.max(0, Math.min(prefixes.length - 1, e));
    const scaled = v / Math.pow(1000, e);
    return Number(scaled.toPrecision(3)).toString() + ' ' + prefixes[e] + unit;
  }

  function fmtSci(v) {
    v = num(v);
    if (v === 0) return '0';
    if (Math.abs(v) >= 0.01 && Math.abs(v) < 1000) return Number(v.toPrecision(3)).toString();
    return v.toExponential(2);
  }

  // 3 significant digits, without exponent for everyday sizes.
  function sig3(v) {
    if (!(Math.abs(v) > 0)) return '0';
    if (Math.abs(v) >= 1000) return fixed(v, 0);
    return Number(v.toPrecision(3)).toString();
  }

  function fmtPct(p) {
    return fixed(p, p < 10 ? 1 : 0) + ' %';
  }

  function fmtLocal(ms) {
    ms = num(ms);
    if (!ms) return '—';
    return new Date(ms).toLocaleString(undefined, {
      year: 'numeric', month: 'short', day: 'numeric',
      hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
  }

  function fmtAgo(ms) {
    ms = num(ms);
    if (!ms) return '—';
    const s = Math.max(0, (Date.now() - ms) / 1000);
    if (s < 2) return 'just now';
    if (s < 60) return Math.round(s) + ' s ago';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return fixed(s / 3600, 1) + ' h ago';
    return fixed(s / 86400, 1) + ' d ago';
  }

  function enumName(v, prefix) {
    if (!v || typeof v !== 'string') return '';
    return (v.startsWith(prefix) ? v.slice(prefix.length) : v).toLowerCase();
  }
  const verdictName = (v) => enumName(v, 'VERDICT_');
  const stageName = (s) => enumName(s, 'STAGE_');
  const kindName = (k) => enumName(k, 'JOB_KIND_');

  function verdictBadge(v) {
    const name = verdictName(v);
    if (!name || name === 'unspecified') return h('span', { class: 'badge v-none' }, 'no verdict');
    return h('span', { class: ['badge', 'v-' + name.replace(/_/g, '-')], title: v },
      name.replace(/_/g, ' '));
  }

  function stageBadge(s, detail) {
    const name = stageName(s) || 'unknown';
    return h('span', { class: ['badge', 'stage', 's-' + name.replace(/_/g, '-')], title: detail || s },
      name.replace(/_/g, ' '));
  }

  function jobLink(id) {
    if (!id) return h('span', { class: 'muted' }, '—');
    return h('a', { class: 'mono', href: '#/job/' + encodeURIComponent(id) }, shortId(id));
  }

  function sessionLink(id) {
    if (!id) return h('span', { class: 'muted' }, '—');
    return h('a', { class: 'mono', href: '#/session/' + encodeURIComponent(id) }, id);
  }

  function shortId(id) {
    id = String(id || '');
    return id.length > 14 ? id.slice(0, 12) + '…' : id;
  }

  function empty(text) {
    return h('p', { class: 'empty' }, text);
  }

  function section(title, attrs, ...children) {
    return h('section', Object.assign({ class: 'card' }, attrs || {}),
      h('h2', null, title), ...children);
  }

  // A definition list of [label, value] pairs; null values are skipped.
  function facts(pairs, cls) {
    const dl = h('dl', { class: ['facts', cls] });
    for (const pair of pairs) {
      if (!pair) continue;
      const [k, v] = pair;
      if (v === null || v === undefined) continue;
      dl.appendChild(h('dt', null, k));
      dl.appendChild(h('dd', null, v));
    }
    return dl;
  }

  // ------------------------------------------------------------------
  // API access.
  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  async function api(path) {
    let res;
    try {
      res = await fetch(path, { cache: 'no-store', headers: { Accept: 'application/json' } });
    } catch (e) {
      throw new ApiError(0, 'UNAVAILABLE', 'cannot reach kbd (' + e.message + ')');
    }
    let body = null;
    try { body = await res.json(); } catch (e) { body = null; }
    if (!res.ok) {
      const err = body && body.error ? body.error : {};
      throw new ApiError(res.status, err.code || 'HTTP_' + res.status,
        (err.message || res.statusText || 'request failed') + ' (' + path + ')');
    }
    if (body === null) throw new ApiError(res.status, 'BAD_JSON', 'the reply of ' + path + ' is not JSON');
    return body;
  }

  // The timing report of a job result: submit's, or the one inside profile's.
  function timingOf(job) {
    const r = job && job.result;
    if (!r) return null;
    const t = r.timing || (r.profile && r.profile.timing) || null;
    return t && t.kernel && num(t.kernel.median_us) > 0 ? t : null;
  }

  // ------------------------------------------------------------------
  // Charts (SVG). Each returns an <svg> that scales to its container.
  const PALETTE = { ink: '#1f2933', grid: '#e4e7eb', axis: '#7b8794', accent: '#2563eb',
    roof: '#b45309', compute: '#7c3aed', ref: '#6b7280' };

  function logTicks(lo, hi) {
    const ticks = [];
    for (let e = lo; e <= hi; e++) ticks.push(e);
    return ticks;
  }

  function fmtDecade(e) {
    const v = Math.pow(10, e);
    if (e >= -3 && e <= 4) return Number(v.toPrecision(1)).toString();
    return '1e' + e;
  }

  function fmtDecadeSI(e) {
    const prefixes = { 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
    const base = Math.floor(e / 3) * 3;
    return Math.pow(10, e - base) + (base in prefixes ? ' ' + prefixes[base] : 'e' + base);
  }

  function chartFrame(cls, width, height, label) {
    return svg('svg', {
      class: ['chart', cls], viewBox: '0 0 ' + width + ' ' + height, role: 'img',
      'aria-label': label, preserveAspectRatio: 'xMidYMid meet',
    });
  }

  // points: [{ai, flops_per_s, label, current, ref}]; gpu: GpuSpec JSON.
  function rooflineChart(points, gpu) {
    const W = 600, H = 520, L = 70, R = 20, T = 24, B = 56;
    const root = chartFrame('roofline', W, H,
      'Roofline: arithmetic intensity against achieved FLOP/s, with the GPU\'s measured memory and compute roofs');
    const bw = num(gpu && gpu.measured_copy_gbps) * 1e9;        // bytes/s
    const peak = num(gpu && gpu.measured_fp32_tflops) * 1e12;   // FLOP/s
    const hasRoofs = bw > 0 && peak > 0;
    const ridge = hasRoofs ? peak / bw : 0;
    const pts = points.filter((p) => p.ai > 0 && p.flops_per_s > 0);

    const xs = pts.map((p) => p.ai).concat(hasRoofs ? [ridge] : []);
    const ys = pts.map((p) => p.flops_per_s).concat(hasRoofs ? [peak] : []);
    if (xs.length === 0) {
      root.appendChild(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'plot-bg' }));
      root.appendChild(svg('text', { x: (L + W - R) / 2, y: (T + H - B) / 2, class: 'chart-note', 'text-anchor': 'middle' },
        'no timed turn yet: profile_kernel or submit_kernel adds a point'));
      return root;
    }
    let x0 = Math.floor(Math.log10(Math.min(...xs) / 4));
    let x1 = Math.ceil(Math.log10(Math.max(...xs) * 4));
    let y0 = Math.floor(Math.log10(Math.min(...ys) / 4));
    let y1 = Math.ceil(Math.log10(Math.max(...ys) * 1.3));
    if (x1 - x0 < 3) { x0 -= 1; x1 += 1; }
    if (y1 - y0 < 3) { y0 -= 1; y1 += 1; }
    const px = (x) => L + (Math.log10(x) - x0) / (x1 - x0) * (W - L - R);
    const py = (y) => H - B - (Math.log10(y) - y0) / (y1 - y0) * (H - T - B);
    const clipY = (y) => Math.max(Math.pow(10, y0), Math.min(Math.pow(10, y1), y));

    root.appendChild(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'plot-bg' }));
    const grid = svg('g', { class: 'grid' });
    for (const e of logTicks(x0, x1)) {
      const x = px(Math.pow(10, e));
      grid.appendChild(svg('line', { x1: x, x2: x, y1: T, y2: H - B }));
      grid.appendChild(svg('text', { x: x, y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, fmtDecade(e)));
    }
    for (const e of logTicks(y0, y1)) {
      const y = py(Math.pow(10, e));
      grid.appendChild(svg('line', { x1: L, x2: W - R, y1: y, y2: y }));
      grid.appendChild(svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, fmtDecadeSI(e)));
    }
    root.appendChild(grid);
    root.appendChild(svg('text', { x: (L + W - R) / 2, y: H - 12, 'text-anchor': 'middle', class: 'axis-title' },
      'arithmetic intensity (FLOP/byte, log)'));
    root.appendChild(svg('text', {
      x: 16, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'axis-title',
      transform: 'rotate(-90 16 ' + (T + H - B) / 2 + ')',
    }, 'achieved FLOP/s (log)'));

    if (hasRoofs) {
      const xa = Math.pow(10, x0), xb = Math.pow(10, x1);
      // Memory roof from the left edge (or where it enters the plot) to the ridge.
      const xStart = Math.max(xa, Math.pow(10, y0) / bw);
      root.appendChild(svg('line', {
        x1: px(xStart), y1: py(clipY(bw * xStart)), x2: px(ridge), y2: py(peak), class: 'roof mem',
      }));
      root.appendChild(svg('line', { x1: px(ridge), y1: py(peak), x2: px(xb), y2: py(peak), class: 'roof compute' }));
      root.appendChild(svg('line', { x1: px(ridge), y1: py(peak), x2: px(ridge), y2: H - B, class: 'ridge-guide' }));
      root.appendChild(svg('circle', { cx: px(ridge), cy: py(peak), r: 4.5, class: 'ridge' },
        svg('title', null, 'ridge point: ' + fmtSci(ridge) + ' FLOP/byte')));
      root.appendChild(svg('text', { x: px(ridge) + 6, y: H - B - 6, class: 'ridge-label' },
        'ridge ' + fmtSci(ridge) + ' FLOP/B'));
      root.appendChild(svg('text', { x: W - R - 6, y: py(peak) - 7, 'text-anchor': 'end', class: 'roof-label compute' },
        'FP32 ' + fmtSI(peak, 'FLOP/s') + ' (measured)'));
      // Label the memory roof along the line, a little way from its start.
      const lx = Math.pow(10, Math.log10(xStart) + (Math.log10(ridge) - Math.log10(xStart)) * 0.12);
      const angle = Math.atan2(py(peak) - py(clipY(bw * xStart)), px(ridge) - px(xStart)) * 180 / Math.PI;
      root.appendChild(svg('text', {
        x: 0, y: -7, class: 'roof-label mem',
        transform: 'translate(' + px(lx).toFixed(1) + ' ' + py(clipY(bw * lx)).toFixed(1) + ') rotate(' + angle.toFixed(1) + ')',
      }, 'copy ' + fmtSI(bw, 'B/s') + ' (measured)'));
    } else {
      root.appendChild(svg('text', { x: W - R - 8, y: T + 18, 'text-anchor': 'end', class: 'chart-note' },
        'no measured ceilings for this GPU: roofs not drawn'));
    }

    // Earlier points first, so the current one is drawn on top.
    const ordered = pts.slice().sort((a, b) => (a.current ? 1 : 0) - (b.current ? 1 : 0));
    for (const p of ordered) {
      const cx = px(p.ai), cy = py(p.flops_per_s);
      const tip = svg('title', null, p.label + ': ' + fmtSci(p.ai) + ' FLOP/byte, ' + fmtSI(p.flops_per_s, 'FLOP/s'));
      if (p.ref) {
        const d = 6;
        root.appendChild(svg('path', {
          d: 'M' + cx + ' ' + (cy - d) + 'L' + (cx + d) + ' ' + cy + 'L' + cx + ' ' + (cy + d) + 'L' + (cx - d) + ' ' + cy + 'Z',
          class: 'pt ref',
        }, tip));
        root.appendChild(svg('text', { x: cx - 10, y: cy + 4, 'text-anchor': 'end', class: 'pt-label ref' }, 'reference'));
      } else {
        root.appendChild(svg('circle', { cx: cx, cy: cy, r: p.current ? 6 : 4.5, class: ['pt', p.current ? 'current' : 'earlier'] }, tip));
        if (p.current) {
          root.appendChild(svg('text', { x: cx + 10, y: cy + 4, class: 'pt-label' }, p.label));
        }
      }
    }
    return root;
  }

  // series: [{seq, kernel_us, ref_us, current}] in turn order.
  function timeChart(series) {
    const W = 600, H = 250, L = 70, R = 20, T = 16, B = 52;
    const root = chartFrame('timechart', W, H, 'Kernel median time over the session\'s timed turns, with the reference median dashed');
    root.appendChild(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'plot-bg' }));
    if (series.length === 0) {
      root.appendChild(svg('text', { x: (L + W - R) / 2, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'chart-note' },
        'no timed turn yet'));
      return root;
    }
    const maxY = Math.max(...series.map((s) => Math.max(s.kernel_us, s.ref_us || 0)));
    const step = niceStep(maxY * 1.15 / 5);
    const top = Math.ceil(maxY * 1.15 / step) * step;
    const n = series.length;
    const px = (i) => n === 1 ? (L + W - R) / 2 : L + 30 + i * (W - L - R - 60) / (n - 1);
    const py = (y) => H - B - y / top * (H - T - B);
    const grid = svg('g', { class: 'grid' });
    for (let v = 0; v <= top + step / 2; v += step) {
      grid.appendChild(svg('line', { x1: L, x2: W - R, y1: py(v), y2: py(v) }));
      grid.appendChild(svg('text', { x: L - 6, y: py(v) + 4, 'text-anchor': 'end', class: 'tick' }, Number(v.toPrecision(3)).toString()));
    }
    const labelEvery = Math.ceil(n / 12);
    series.forEach((s, i) => {
      if (i % labelEvery !== 0 && i !== n - 1) return;
      grid.appendChild(svg('text', { x: px(i), y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, '#' + s.seq));
    });
    root.appendChild(grid);
    root.appendChild(svg('text', { x: (L + W - R) / 2, y: H - 12, 'text-anchor': 'middle', class: 'axis-title' },
      'timed turn (profile_kernel / submit_kernel)'));
    root.appendChild(svg('text', {
      x: 16, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'axis-title',
      transform: 'rotate(-90 16 ' + (T + H - B) / 2 + ')',
    }, 'median time (us)'));

    const refPts = series.map((s, i) => [i, s.ref_us]).filter((p) => p[1] > 0);
    if (refPts.length > 0) {
      const d = refPts.length === 1
        ? 'M' + L + ' ' + py(refPts[0][1]) + 'L' + (W - R) + ' ' + py(refPts[0][1])
        : refPts.map((p, j) => (j ? 'L' : 'M') + px(p[0]) + ' ' + py(p[1])).join('');
      root.appendChild(svg('path', { d: d, class: 'line ref' }));
    }
    root.appendChild(svg('path', {
      d: series.map((s, i) => (i ? 'L' : 'M') + px(i) + ' ' + py(s.kernel_us)).join(''), class: 'line kernel',
    }));
    series.forEach((s, i) => {
      root.appendChild(svg('circle', { cx: px(i), cy: py(s.kernel_us), r: s.current ? 5.5 : 4, class: ['pt', 'series', s.current ? 'current' : null] },
        svg('title', null, 'turn ' + s.seq + ': kernel ' + fmtUs(s.kernel_us) + (s.ref_us ? ', reference ' + fmtUs(s.ref_us) : ''))));
    });
    return root;
  }

  function niceStep(raw) {
    if (!(raw > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }

  // The top-5 warp-stall bars; no counters exist yet, so only the frame
  // (axis and five empty rows), with a note where the data will come from.
  function warpStallChart() {
    const W = 600, H = 200, L = 24, R = 24, T = 12, B = 44;
    const root = chartFrame('warpstalls', W, H, 'Top warp stall reasons (no data yet)');
    root.appendChild(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'plot-bg' }));
    const grid = svg('g', { class: 'grid' });
    for (let i = 0; i <= 4; i++) {
      const x = L + i * (W - L - R) / 4;
      grid.appendChild(svg('line', { x1: x, x2: x, y1: T, y2: H - B }));
      grid.appendChild(svg('text', { x: x, y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, (i * 25) + ' %'));
    }
    for (let i = 1; i < 5; i++) {
      const y = T + i * (H - T - B) / 5;
      grid.appendChild(svg('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'row-line' }));
    }
    root.appendChild(grid);
    root.appendChild(svg('text', { x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle', class: 'axis-title' },
      'share of sampled warp stalls (%), top 5 reasons'));
    const cy = (T + H - B) / 2;
    root.appendChild(svg('rect', { x: 100, y: cy - 16, width: W - 200, height: 30, rx: 6, class: 'note-bg' }));
    root.appendChild(svg('text', { x: W / 2, y: cy + 4, 'text-anchor': 'middle', class: 'chart-note' },
      'warp-stall counters arrive with profile_kernel\'s CUPTI counters'));
    return root;
  }

  // ------------------------------------------------------------------
  // Shared blocks.
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

  function timingTable(t) {
    return h('table', { class: 'data timing' },
      h('thead', null, h('tr', null,
        h('th', null, ''), h('th', { class: 'num' }, 'mean'), h('th', { class: 'num' }, 'median'),
        h('th', { class: 'num' }, 'std'), h('th', { class: 'num' }, 'min'), h('th', { class: 'num' }, 'max'),
        h('th', { class: 'num' }, 'n'))),
      h('tbody', null, statsRow('kernel', t.kernel), statsRow('reference', t.reference)));
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
      this.stats = h('div', { class: 'stat-strip' });
      append(root, [
        h('div', { class: 'page-head' }, h('h1', null, 'Overview'),
          h('p', { class: 'subtitle' }, 'GPU workers, the job queue and agent sessions of this kbd')),
        this.stats,
        section('Queue and workers', { id: 'workers' }, this.workersBox),
        section('Sessions', { id: 'sessions' }, this.sessionsBox),
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
      const [w, j, s] = await Promise.allSettled([
        api('/api/workers'), api('/api/jobs?page_size=12'), api('/api/sessions?limit=50')]);
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
          h('div', { class: 'muted small mono' }, x.worker_id || '')),
        h('td', null, (x.spec && x.spec.name) || '—',
          x.spec && x.spec.arch ? h('div', { class: 'muted small' }, x.spec.arch) : null),
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
      this.problem = h('div');
      this.live = h('div', { class: 'live-jobs' });
      this.turnList = h('ol', { class: 'timeline', reversed: true });
      append(root, [
        this.head, this.banner, this.figures, this.charts,
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
            ['tolerance', 'atol ' + fmtSci(tol.atol) + ' · rtol ' + fmtSci(tol.rtol) + ' · max rel-norm ' + fmtSci(tol.max_rel_norm)],
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
          h('p', { class: 'card-sub' }, 'top 5 stall reasons of the kernel\'s warps'),
          warpStallChart()));
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
          '); a trial passes when every element passes and the rel-norm error ≤ ' + fmtSci(tol.max_rel_norm) + '.')));
    }
  }

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
        ['GPU', r.gpu && r.gpu.name ? r.gpu.name + (r.gpu.arch ? ' (' + r.gpu.arch + ')' : '') : '—'],
        ['attempts', String(num(job.attempts))],
        ['created', fmtLocal(job.created_unix_ms)],
        ['finished', done ? fmtLocal(job.finished_unix_ms) : '—'],
        ['runner time', num(r.runner_ms) > 0 ? fmtDurationMs(r.runner_ms) : '—'],
        ['source digest', h('span', { class: 'mono small' }, job.source_digest || '—')],
      ], 'wide')));
      const t = timingOf(job);
      if (t) {
        parts.push(section('Timing', null, h('div', { class: 'table-wrap' }, timingTable(t)),
          facts([['speedup', fixed(num(t.speedup), 2) + '×'], ['shape', (t.shape_set || '') + '/' + (t.shape || '') + ' ' + dimsText(t.dims)]])));
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

  // ------------------------------------------------------------------
  // Routing and polling.
  const app = document.getElementById('app');
  const liveEl = document.getElementById('live');
  const errEl = document.getElementById('api-error');
  const crumbs = document.getElementById('crumbs');
  let view = null;
  let generation = 0;
  let timer = null;
  let busy = false;

  function parseRoute() {
    const hash = location.hash.replace(/^#/, '') || '/';
    let m = hash.match(/^\/session\/(.+)$/);
    if (m) return { kind: 'session', id: decodeURIComponent(m[1]) };
    m = hash.match(/^\/job\/(.+)$/);
    if (m) return { kind: 'job', id: decodeURIComponent(m[1]) };
    return { kind: 'overview' };
  }

  function route() {
    const r = parseRoute();
    generation++;
    view = r.kind === 'session' ? new SessionView(r.id) : r.kind === 'job' ? new JobView(r.id) : new OverviewView();
    fill(app);
    view.mount(app);
    document.title = view.title + ' · kbench';
    fill(crumbs, h('a', { href: '#/' }, 'Overview'),
      r.kind !== 'overview' ? [h('span', { class: 'crumb-sep' }, '›'),
        h('span', { class: 'crumb-here' }, (r.kind === 'session' ? 'session ' : 'job ') + shortId(r.id))] : null);
    window.scrollTo(0, 0);
    tick();
  }

  async function tick() {
    clearTimeout(timer);
    timer = null;
    if (document.hidden) {
      liveEl.textContent = 'paused (tab hidden)';
      liveEl.className = 'live paused';
      return;
    }
    if (busy) {
      timer = setTimeout(tick, POLL_MS);
      return;
    }
    busy = true;
    const gen = generation;
    const v = view;
    try {
      await v.refresh();
      if (gen === generation) {
        errEl.hidden = true;
        liveEl.className = 'live ok';
        liveEl.textContent = 'live · updated ' + new Date().toLocaleTimeString();
      }
    } catch (e) {
      if (gen === generation) {
        errEl.hidden = false;
        errEl.textContent = 'Cannot read the kbench API: ' + e.message + '. Retrying every second.';
        liveEl.className = 'live stale';
        liveEl.textContent = 'disconnected';
      }
    } finally {
      busy = false;
    }
    if (!timer && !document.hidden) timer = setTimeout(tick, POLL_MS);
  }

  window.addEventListener('hashchange', route);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) tick(); });
  route();
})();
