// kbench dashboard: the profile card of the session page. It shows what kbd
// and the runner concluded from the newest profile_kernel turn: the preset
// and replay passes, the speed-of-light headroom, the roofline class, the
// hints (each with the figure and threshold that fired), the hottest source
// lines from PC sampling, and the deltas against the session's previous
// profile. Part of the page's classic scripts (see index.html).
'use strict';

// The newest turn whose job carries a profile; { turn, p } or null.
function latestProfile(turns) {
  for (let i = turns.length - 1; i >= 0; i--) {
    const p = turns[i].job && turns[i].job.result && turns[i].job.result.profile;
    if (p && (p.preset || p.counters_unavailable)) return { turn: turns[i], p };
  }
  return null;
}

function profileHints(hints) {
  if (!hints.length) return empty('No hint fired.');
  return h('ul', { class: 'hints' }, hints.map((x) => h('li', { 'data-rule': x.rule || '' },
    h('span', { class: 'mono hint-rule' }, x.rule || '?'), ' ',
    h('span', { class: 'muted mono' }, (x.metric || '') + ' = ' + sig3(num(x.value)) + ' ' + (x.threshold || '')),
    x.entry ? h('span', { class: 'muted' }, ' · ' + x.entry) : null,
    h('div', { class: 'hint-msg' }, x.message || ''))));
}

function hotLinesTable(lines, samples) {
  if (!lines.length) return null;
  return h('div', null,
    h('h3', null, 'Hot source lines ', h('span', { class: 'muted small' }, sig3(num(samples)) + ' PC samples')),
    h('div', { class: 'table-scroll' }, h('table', { class: 'data hot-lines' },
      h('thead', null, h('tr', null, h('th', null, 'line'), h('th', { class: 'num' }, 'samples'),
        h('th', null, 'source'), h('th', null, 'warp states'),
        h('th', { class: 'num', title: 'global-load sectors per request at this line (4 is ideal for 4-byte words)' }, 'sectors/req'))),
      h('tbody', null, lines.map((l) => h('tr', { 'data-line': String(num(l.line)) },
        h('td', { class: 'mono' }, (l.file || '').split('/').pop() + ':' + num(l.line)),
        h('td', { class: 'num' }, fmtPct(num(l.sample_pct))),
        h('td', null, h('code', null, l.text || '(no source text)')),
        h('td', { class: 'muted' }, (l.top_stalls || []).map((r) =>
          (r.reason || '?') + ' ' + fmtPct(num(r.share_pct))).join(', ')),
        h('td', { class: 'num' }, num(l.global_load_requests) > 0
          ? num(l.global_load_sectors_per_request).toFixed(2) : '')))))));
}

function deltasTable(deltas, previousJob) {
  if (!deltas.length) return null;
  return h('div', null,
    h('h3', null, 'Against the previous profile ', previousJob ? jobLink(previousJob) : null),
    h('div', { class: 'table-scroll' }, h('table', { class: 'data deltas' },
      h('thead', null, h('tr', null, h('th', null, 'figure'), h('th', { class: 'num' }, 'previous'),
        h('th', { class: 'num' }, 'now'), h('th', null, ''))),
      h('tbody', null, deltas.map((d) => h('tr', { class: d.regressed ? 'regressed' : 'ok' },
        h('td', { class: 'mono' }, d.figure || '?'),
        h('td', { class: 'num' }, sig3(num(d.previous)) + ' ' + (d.unit || '')),
        h('td', { class: 'num' }, sig3(num(d.current)) + ' ' + (d.unit || '')),
        h('td', null, h('span', { class: ['badge', d.regressed ? 'bad' : 'good'] },
          d.regressed ? 'REGRESSED' : 'ok'))))))));
}

// The card; `found` is latestProfile()'s answer.
function profileCard(found) {
  const attrs = { class: 'card profile-card', id: 'profile' };
  if (!found) {
    return section('Profile', attrs, empty('No profile yet: profile_kernel reads the hardware counters.'));
  }
  const p = found.p;
  const hr = p.headroom || null;
  const roof = p.roofline || null;
  const missing = (p.missing || []).map((m) => (m.figure || '?') + ' (' + (m.reason || '') + ')');
  return section('Profile', attrs,
    h('p', { class: 'card-sub' }, 'turn ' + num(found.turn.seq) + ' · preset ' + (p.preset || '?') + ' · ' +
      num(p.passes) + ' replay passes per kernel · ' + fixed(num(p.counters_ms), 0) + ' ms of counters' +
      (num(p.world_size) > 1 ? ' · rank ' + num(p.rank) + ' of ' + num(p.world_size) + ', run alone' : '')),
    p.counters_unavailable ? h('p', { class: 'warn' }, 'Counters unavailable: ' + p.counters_unavailable) : null,
    facts([
      ['headroom', hr && num(hr.floor_us) > 0 ? hr.note || '' : '—'],
      ['roofline', roof && roof.bound ? h('span', null, h('span', { class: 'strong' }, roof.bound + '-bound'),
        roof.reason ? ': ' + roof.reason : '') : '—'],
      ['missing', missing.length ? missing.join('; ') : 'nothing'],
    ]),
    h('h3', null, 'Hints'),
    profileHints(p.hints || []),
    hotLinesTable(p.hot_lines || [], p.pc_samples),
    deltasTable(p.deltas || [], p.previous_job_id || ''));
}
