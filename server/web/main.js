// kbench dashboard: routing and polling; loaded last.
// Part of the page's classic scripts (see index.html), loaded in order;
// they share the page's global scope.
'use strict';

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
