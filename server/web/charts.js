// kbench dashboard: SVG charts drawn from the data (no library).
// Part of the page's classic scripts (see index.html), loaded in order;
// they share the page's global scope.
'use strict';

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

// The x axis title under the plot and the y axis title turned along its
// left edge; `box` holds the chart's size and margins.
function axisTitles(root, box, xTitle, yTitle) {
  const { W, H, L, R, T, B } = box;
  root.appendChild(svg('text', { x: (L + W - R) / 2, y: H - 12, 'text-anchor': 'middle', class: 'axis-title' }, xTitle));
  const cy = (T + H - B) / 2;
  root.appendChild(svg('text', {
    x: 16, y: cy, 'text-anchor': 'middle', class: 'axis-title', transform: 'rotate(-90 16 ' + cy + ')',
  }, yTitle));
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
  axisTitles(root, { W, H, L, R, T, B }, 'arithmetic intensity (FLOP/byte, log)', 'achieved FLOP/s (log)');

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
  axisTitles(root, { W, H, L, R, T, B }, 'timed turn (profile_kernel / submit_kernel)', 'median time (us)');

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

// The top-5 warp-stall bars of one launch (shares of sampled stalls), or
// the empty frame with a note when no profile with counters exists yet.
function warpStallChart(stalls) {
  const W = 600, H = 200, L = 150, R = 56, T = 12, B = 44;
  const rows = (stalls || []).slice(0, 5);
  const root = chartFrame('warpstalls', W, H, rows.length
    ? 'Top warp stall reasons: ' + rows.map((x) => x.reason + ' ' + fixed(num(x.share_pct), 1) + ' %').join(', ')
    : 'Top warp stall reasons (no data yet)');
  root.appendChild(svg('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'plot-bg' }));
  const grid = svg('g', { class: 'grid' });
  for (let i = 0; i <= 4; i++) {
    const x = L + i * (W - L - R) / 4;
    grid.appendChild(svg('line', { x1: x, x2: x, y1: T, y2: H - B }));
    grid.appendChild(svg('text', { x: x, y: H - B + 16, 'text-anchor': 'middle', class: 'tick' }, (i * 25) + ' %'));
  }
  root.appendChild(grid);
  root.appendChild(svg('text', { x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle', class: 'axis-title' },
    'share of sampled warp stalls (%), top 5 reasons'));
  const rowH = (H - T - B) / 5;
  if (!rows.length) {
    const cy = (T + H - B) / 2;
    root.appendChild(svg('rect', { x: L + 10, y: cy - 16, width: W - L - R - 20, height: 30, rx: 6, class: 'note-bg' }));
    root.appendChild(svg('text', { x: (L + W - R) / 2, y: cy + 4, 'text-anchor': 'middle', class: 'chart-note' },
      'no stall counters yet: profile_kernel collects them'));
    return root;
  }
  rows.forEach((x, i) => {
    const share = Math.max(0, Math.min(100, num(x.share_pct)));
    const y = T + i * rowH + rowH * 0.18;
    const w = share / 100 * (W - L - R);
    root.appendChild(svg('text', { x: L - 8, y: y + rowH * 0.45, 'text-anchor': 'end', class: 'tick stall-name' }, x.reason || '?'));
    root.appendChild(svg('rect', { x: L, y: y, width: Math.max(w, 1), height: rowH * 0.64, rx: 3, class: 'stall-bar' },
      svg('title', null, (x.reason || '?') + ': ' + fixed(share, 1) + ' % of sampled stalls')));
    root.appendChild(svg('text', { x: L + w + 6, y: y + rowH * 0.45, class: 'tick stall-value' }, fixed(share, 1) + ' %'));
  });
  return root;
}

// The stall shares of the newest profiled turn: its launch with the largest
// share of the time. Returns { stalls, caption } or null.
function latestStalls(timed) {
  for (let i = timed.length - 1; i >= 0; i--) {
    const p = timed[i].job && timed[i].job.result && timed[i].job.result.profile;
    const launches = ((p && p.launches) || []).filter((l) => (l.top_stalls || []).length);
    if (!launches.length) continue;
    launches.sort((a, b) => num(b.share_pct) - num(a.share_pct));
    const l = launches[0];
    return { stalls: l.top_stalls, caption: 'turn ' + num(timed[i].seq) + ' · ' + (l.entry || 'kernel') +
      (launches.length > 1 ? ' (' + fmtPct(num(l.share_pct)) + ' of the time)' : '') };
  }
  return null;
}
