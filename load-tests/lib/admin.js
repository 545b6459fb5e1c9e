// The operator's side: mode switch and the conservation view, through the admin API.
import http from 'k6/http';
import { sleep } from 'k6';
import { plan } from './plan.js';
import * as m from './metrics.js';

const admin = () => ({
  headers: { Authorization: `Bearer ${__ENV.ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
  tags: { control: 'admin' },
  timeout: '10s',
});

export function setMode(mode) {
  const res = http.put(`${plan.baseUrl}/api/v1/admin/mode`, JSON.stringify({ mode, reason: `k6 ${plan.drill} drill` }), admin());
  if (res.status !== 200) {
    throw new Error(`mode switch to ${mode} answered ${res.status}: ${res.body}`);
  }
  // Every instance re-reads the flag within a second.
  sleep(1.2);
}

export function stockView(saleId) {
  const res = http.get(`${plan.baseUrl}/api/v1/admin/sales/${saleId}/stock`, admin());
  return res.status === 200 ? res.json() : null;
}

/**
 * Waits until no accepted order is still queued (bounded), then checks conservation for every sale:
 * redis remaining + queued + confirmed == expected stock, db remaining + confirmed == expected stock,
 * confirmed <= stock, nothing left queued, and the API's own `balanced`.
 */
export function checkConservation() {
  const started = Date.now();
  const pending = new Set(plan.modes);
  const views = {};
  while (pending.size > 0) {
    for (const mode of Array.from(pending)) {
      const view = stockView(plan.sales[mode].id);
      views[mode] = view;
      if (view && view.queued === 0) {
        pending.delete(mode);
        m.drainSeconds.add((Date.now() - started) / 1000, { mode });
      }
    }
    if (pending.size === 0 || Date.now() - started > plan.finalBoundSeconds * 1000) break;
    sleep(0.5);
  }
  for (const mode of plan.modes) {
    const sale = plan.sales[mode];
    const expected = sale.stock + plan.expectStockOffset;
    const v = views[mode];
    const tags = { mode };
    if (!v) {
      console.error(`[invariant] ${mode} sale ${sale.id}: stock view unavailable`);
      m.invariantOk.add(false, tags);
      continue;
    }
    const problems = [];
    if (v.queued !== 0) problems.push(`${v.queued} still queued after ${plan.finalBoundSeconds}s`);
    if (v.redisRemaining + v.queued + v.confirmed !== expected) {
      problems.push(`redis remaining ${v.redisRemaining} + queued ${v.queued} + confirmed ${v.confirmed} != ${expected}`);
    }
    if (v.dbRemaining + v.confirmed !== expected) problems.push(`db remaining ${v.dbRemaining} + confirmed ${v.confirmed} != ${expected}`);
    if (v.confirmed > sale.stock) problems.push(`confirmed ${v.confirmed} > stock ${sale.stock}`);
    if (!v.balanced) problems.push('API reports balanced=false');
    m.invariantOk.add(problems.length === 0, tags);
    m.finalConfirmed.add(v.confirmed, tags);
    m.finalQueued.add(v.queued, tags);
    m.finalRedisRemaining.add(v.redisRemaining, tags);
    m.finalDbRemaining.add(v.dbRemaining, tags);
    m.finalRejected.add(v.rejected, tags);
    m.finalFailed.add(v.failed, tags);
    console.log(`[invariant] ${mode} sale ${sale.id}: ${problems.length === 0 ? 'OK' : 'FAILED: ' + problems.join('; ')} ${JSON.stringify(v)}`);
  }
}
