// handleSummary: the k6 JSON summary, and a short text table per mode (also printed at the end).
import { plan, phases, shape } from './plan.js';

const metric = (data, name) => data.metrics[name] || null;
const val = (data, name, stat) => {
  const mtr = metric(data, name);
  return mtr && mtr.values[stat] !== undefined ? mtr.values[stat] : null;
};
const ms = (v) => (v === null ? '-' : v < 10 ? v.toFixed(1) : String(Math.round(v)));
const num = (v, digits = 0) => (v === null ? '-' : Number(v).toFixed(digits));
const pad = (s, n) => (String(s) + ' '.repeat(n)).slice(0, Math.max(n, String(s).length));
const SHORT = { SOLD_OUT: 'sold', PURCHASE_LIMIT_REACHED: 'limit', SALE_NOT_ACTIVE: 'inactive', UNAVAILABLE: '503', TOO_MANY_REQUESTS: '429', OTHER: 'other' };

/** The highest ramp step that kept errors, p99 and the offered rate within limits. */
function knee(data, mode, sh) {
  let last = null;
  for (const step of sh.steps) {
    const sel = `{mode:${mode},step:${step}}`;
    const offered = val(data, `offered${sel}`, 'count') || 0;
    const err = val(data, `step_error${sel}`, 'rate') || 0;
    const p99 = val(data, `accept_latency${sel}`, 'p(99)');
    const offeredShare = offered / (step * sh.stepSeconds);
    const reasons = [];
    if (err > plan.kneeErrorRate) reasons.push(`errors ${(err * 100).toFixed(1)}%`);
    if (p99 !== null && p99 > plan.p99Ms) reasons.push(`p99 ${ms(p99)}ms`);
    // The first second of a step is its climb, so a full step offers a little less than rate x length.
    if (offeredShare < 0.85) reasons.push(`offered ${Math.round(offeredShare * 100)}% (dropped)`);
    if (reasons.length > 0) return { rate: last, brokeAt: step, reasons };
    last = step;
  }
  return { rate: last, brokeAt: null, reasons: [] };
}

export function rows(data) {
  const sh = shape();
  const list = [];
  for (const phase of phases()) {
    const sel = `{mode:${phase.mode}}`;
    const seconds = phase.seconds;
    const row = {
      mode: phase.mode,
      offeredPerSecond: (val(data, `offered${sel}`, 'count') || 0) / seconds,
      servedPerSecond: (val(data, `served${sel}`, 'count') || 0) / seconds,
      acceptedPerSecond: phase.mode === 'PING' ? null : (val(data, `accepted${sel}`, 'count') || 0) / seconds,
      acceptedSync: val(data, `accepted{mode:${phase.mode},path:SYNC}`, 'count') || 0,
      acceptedAsync: val(data, `accepted{mode:${phase.mode},path:ASYNC}`, 'count') || 0,
      refusals: {},
      p50: val(data, `accept_latency${sel}`, 'med'),
      p95: val(data, `accept_latency${sel}`, 'p(95)'),
      p99: val(data, `accept_latency${sel}`, 'p(99)'),
      confirmP50: val(data, `time_to_confirm${sel}`, 'med'),
      confirmP95: val(data, `time_to_confirm${sel}`, 'p(95)'),
      dropped: val(data, `dropped_iterations{scenario:${phase.name}}`, 'count') || 0,
      unexpected: val(data, `unexpected${sel}`, 'count') || 0,
      invariant: phase.mode === 'PING' ? null : val(data, `invariant_ok${sel}`, 'rate'),
      confirmed: val(data, `final_confirmed${sel}`, 'value'),
      queued: val(data, `final_queued${sel}`, 'value'),
      knee: sh.steps.length > 0 ? knee(data, phase.mode, sh) : null,
    };
    for (const c of Object.keys(SHORT)) {
      const n = val(data, `refusals{mode:${phase.mode},code:${c}}`, 'count');
      if (n) row.refusals[c] = n;
    }
    list.push(row);
  }
  const base = list.find((r) => r.mode === 'PING');
  for (const r of list) {
    r.servedVsPing = base && base.servedPerSecond > 0 ? r.servedPerSecond / base.servedPerSecond : null;
    r.p99VsPing = base && base.p99 ? r.p99 / base.p99 : null;
    r.kneeVsPing = base && base.knee && r.knee && base.knee.rate && r.knee.rate !== null ? r.knee.rate / base.knee.rate : null;
  }
  return list;
}

function failedThresholds(data) {
  const failed = [];
  for (const [name, mtr] of Object.entries(data.metrics)) {
    for (const [expr, t] of Object.entries(mtr.thresholds || {})) {
      if (!t.ok) failed.push(`${name} ${expr}`);
    }
  }
  return failed;
}

export function table(data) {
  const sh = shape();
  const list = rows(data);
  const lines = [];
  const describe = plan.shape.kind === 'steady' ? `${plan.shape.rate}/s for ${plan.shape.seconds}s`
    : plan.shape.kind === 'spike' ? `0 -> ${plan.shape.peak}/s in 1s, held ${plan.shape.holdSeconds}s`
    : `${sh.steps.join(' ')} /s, ${sh.stepSeconds}s per step`;
  lines.push(`drill ${plan.drill} (${plan.shape.kind}: ${describe}); stock ${plan.stock} per mode, limit ${plan.perUserLimit}/user, ${plan.users} shoppers; p99 limit ${plan.p99Ms} ms; 503 counted as ${plan.unavailableIsError ? 'error' : 'refusal'}`);
  const head = ['mode', 'offered/s', 'served/s', 'accepted/s', 'refusals', 'accept p50/p95/p99 ms', 'confirm p50/p95 ms', 'dropped', 'unexp', 'invariant', 'vs ping (served, p99)'];
  if (sh.steps.length > 0) head.push('knee /s (vs ping)');
  const body = list.map((r) => {
    const refusals = Object.entries(r.refusals).map(([c, n]) => `${SHORT[c]}:${n}`).join(' ') || '-';
    const acc = r.acceptedPerSecond === null ? '-' : `${num(r.acceptedPerSecond, 1)}${r.mode === 'AUTO' ? ` (s${r.acceptedSync}/a${r.acceptedAsync})` : ''}`;
    const inv = r.invariant === null ? '-' : r.invariant === 1 ? `OK c=${r.confirmed} q=${r.queued}` : `FAIL c=${r.confirmed} q=${r.queued}`;
    const cells = [
      r.mode, num(r.offeredPerSecond, 1), num(r.servedPerSecond, 1), acc, refusals,
      `${ms(r.p50)}/${ms(r.p95)}/${ms(r.p99)}`,
      r.mode === 'PING' ? '-' : `${ms(r.confirmP50)}/${ms(r.confirmP95)}`,
      num(r.dropped), num(r.unexpected), inv,
      r.servedVsPing === null ? '-' : `${num(r.servedVsPing, 2)}, ${num(r.p99VsPing, 1)}x`,
    ];
    if (sh.steps.length > 0) {
      const k = r.knee;
      cells.push(`${k.rate === null ? '<' + sh.steps[0] : k.brokeAt === null ? '>=' + k.rate : k.rate}${r.kneeVsPing !== null ? ` (${num(r.kneeVsPing, 2)})` : ''}${k.brokeAt ? ` [${k.brokeAt}: ${k.reasons.join(', ')}]` : ''}`);
    }
    return cells;
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((c) => String(c[i]).length)));
  const fmt = (cells) => '| ' + cells.map((c, i) => pad(c, widths[i])).join(' | ') + ' |';
  lines.push(fmt(head));
  lines.push('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  body.forEach((c) => lines.push(fmt(c)));
  const failed = failedThresholds(data);
  const dropped = val(data, 'dropped_iterations', 'count') || 0;
  lines.push(`dropped_iterations total: ${dropped}`);
  lines.push(failed.length === 0 ? 'thresholds: all passed' : `thresholds FAILED: ${failed.join('; ')}`);
  return lines.join('\n') + '\n';
}

export function summary(data) {
  const text = table(data);
  const out = plan.outDir;
  return {
    stdout: '\n' + text,
    [`${out}/summary.txt`]: text,
    [`${out}/summary.json`]: JSON.stringify(data, null, 1),
    [`${out}/table.json`]: JSON.stringify({ plan, rows: rows(data) }, null, 1),
  };
}
