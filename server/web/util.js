// kbench dashboard: a single-page app over kbd's JSON API (/api/...).
// Plain JavaScript, no framework, nothing loaded from elsewhere. Routes:
//   #/              queue and workers, sessions, problems by suite, jobs
//   #/session/{id}  one agent session: verdict, figures, plots, turns
//   #/job/{id}      one job: result, logs, raw JSON
// Views poll the API about once a second while the tab is visible.
// Every string from the API reaches the DOM as a text node or through
// textContent, never parsed as markup.
// This file: DOM helpers, formatting and API access.
'use strict';

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
