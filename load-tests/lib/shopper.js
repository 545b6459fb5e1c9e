// A storefront client: one purchase attempt per iteration, by one of many shoppers. Some retry the
// same request with the same Idempotency-Key, some come back after reaching their per-user limit,
// and after a 202 they poll the order, honouring Retry-After, until it is final.
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import { SharedArray } from 'k6/data';
import { plan, shape } from './plan.js';
import * as m from './metrics.js';

const shoppers = new SharedArray('shoppers', () => JSON.parse(open(plan.tokensFile)));
const EXPECTED_REFUSALS = ['SOLD_OUT', 'PURCHASE_LIMIT_REACHED', 'SALE_NOT_ACTIVE'];
const FINAL = ['CONFIRMED', 'REJECTED', 'FAILED'];
const SHAPE = shape();

http.setResponseCallback(http.expectedStatuses(200, 201, 202, 204, 409));

/** The ramp step (its target rate) this iteration belongs to, from the time into the phase. */
function tagsFor(mode) {
  const tags = { mode };
  if (SHAPE.steps.length > 0) {
    const elapsed = (Date.now() - exec.scenario.startTime) / 1000;
    const i = Math.min(SHAPE.steps.length - 1, Math.max(0, Math.floor(elapsed / SHAPE.stepSeconds)));
    tags.step = String(SHAPE.steps[i]);
  }
  return tags;
}

function unexpected(tags, reason, res) {
  m.unexpected.add(1, Object.assign({ reason }, tags));
  if (plan.verbose) console.warn(`[unexpected] ${tags.mode} ${reason}: ${res ? res.status + ' ' + res.body : ''}`);
}

function code(res) {
  try {
    return res.json('code') || 'OTHER';
  } catch (e) {
    return 'OTHER';
  }
}

function retryAfter(res, fallback) {
  const value = parseFloat(res.headers['Retry-After']);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** The /ping baseline: the same arrival rate against a trivial authenticated endpoint. */
export function ping() {
  const tags = tagsFor(__ENV.MODE);
  m.offered.add(1, tags);
  const shopper = shoppers[exec.scenario.iterationInTest % shoppers.length];
  const res = http.get(`${plan.baseUrl}/api/v1/ping`, {
    headers: { Authorization: `Bearer ${shopper.token}` },
    tags: Object.assign({ name: 'ping' }, tags),
    timeout: '10s',
  });
  m.acceptLatency.add(res.timings.duration, tags);
  const ok = res.status === 204;
  m.stepError.add(!ok, tags);
  if (ok) m.served.add(1, tags);
  else unexpected(tags, `ping_${res.status}`, res);
}

export function purchase() {
  const mode = __ENV.MODE;
  const tags = tagsFor(mode);
  const sale = plan.sales[mode];
  m.offered.add(1, tags);
  const shopper = shoppers[Math.floor(Math.random() * shoppers.length)];
  const quantity = Math.random() < plan.multiUnitFraction ? Math.min(2, plan.perUserLimit) : 1;
  const headers = { Authorization: `Bearer ${shopper.token}`, 'Content-Type': 'application/json' };
  if (Math.random() < plan.keyFraction) {
    headers['Idempotency-Key'] = `${plan.runId}-${exec.scenario.name}-${exec.scenario.iterationInTest}`;
  }
  const params = { headers, tags: Object.assign({ name: 'purchase' }, tags), timeout: '10s' };
  const url = `${plan.baseUrl}/api/v1/sales/${sale.id}/orders`;
  const body = JSON.stringify({ quantity });

  const sent = Date.now();
  const res = http.post(url, body, params);
  m.acceptLatency.add(res.timings.duration, tags);
  const outcome = classify(res, tags, quantity);

  // A client that lost the answer sends the very same request again: it must get the same order back.
  if (headers['Idempotency-Key'] && Math.random() < plan.retryFraction) {
    const again = http.post(url, body, Object.assign({}, params, { tags: Object.assign({ name: 'purchase-retry' }, tags) }));
    checkReplay(res, again, tags);
  }
  if (outcome.accepted && res.status === 201) {
    m.timeToConfirm.add(Date.now() - sent, Object.assign({ path: 'SYNC' }, tags));
  }
  if (outcome.accepted && res.status === 202 && Math.random() < plan.pollFraction) {
    poll(res, shopper, sent, tags);
  }
}

// 503s of a sale's line (docs/api.md): BEYOND_STOCK, IN_LINE, UNITS_HELD.
const LINE_ANSWERS = ['BEYOND_STOCK', 'IN_LINE', 'UNITS_HELD'];

function classify(res, tags, quantity) {
  if (res.status === 201 || res.status === 202) {
    const path = res.status === 201 ? 'SYNC' : 'ASYNC';
    m.accepted.add(1, Object.assign({ path }, tags));
    m.acceptedLatency.add(res.timings.duration, tags);
    m.unitsAccepted.add(quantity, tags);
    m.served.add(1, tags);
    m.stepError.add(false, tags);
    return { accepted: true };
  }
  const c = code(res);
  if (res.status === 409 && EXPECTED_REFUSALS.includes(c)) {
    m.refusals.add(1, Object.assign({ code: c }, tags));
    m.served.add(1, tags);
    m.stepError.add(false, tags);
    return { accepted: false };
  }
  if (res.status === 503 && LINE_ANSWERS.includes(c)) {
    // The sale's line answered: the shopper has a place (Line-Place) and is told when to ask again. A true
    // answer of a sale still selling to the places ahead, not an error and not the knee.
    m.refusals.add(1, Object.assign({ code: 'LINE' }, tags));
    m.served.add(1, tags);
    m.stepError.add(false, tags);
    return { accepted: false };
  }
  if ((res.status === 503 && (c === 'UNAVAILABLE' || c === 'OUTCOME_UNKNOWN')) || res.status === 429) {
    // The bulkhead, a breaker or admission control said "not now": a refusal that marks the knee, or an
    // error (load-tests/README.md#what-fails-a-drill-thresholds). How fast it came, and whether it said when to come back, is the bench's concern.
    // OUTCOME_UNKNOWN (Redis or Postgres did not answer in time, docs/api.md) is as true: the order it names may
    // exist, and the books count it if it does (a sale must confirm at least the units clients saw accepted).
    m.refusals.add(1, Object.assign({ code: res.status === 429 ? 'TOO_MANY_REQUESTS' : c }, tags));
    m.refusalLatency.add(res.timings.duration, tags);
    m.refusalRetryAfter.add(res.headers['Retry-After'] !== undefined, tags);
    m.stepError.add(true, tags);
    if (plan.unavailableIsError) unexpected(tags, `unavailable_${res.status}`, res);
    return { accepted: false };
  }
  m.refusals.add(1, Object.assign({ code: 'OTHER' }, tags));
  m.stepError.add(true, tags);
  unexpected(tags, `status_${res.status}_${c}`, res);
  return { accepted: false };
}

function checkReplay(first, again, tags) {
  if (first.status !== 201 && first.status !== 202) return; // the first attempt took nothing: a fresh try
  if (again.status === 503) {
    // "Not now" for the retry is no broken promise: the order from the first answer still stands.
    m.refusals.add(1, Object.assign({ code: 'UNAVAILABLE' }, tags));
    if (plan.unavailableIsError) unexpected(tags, 'unavailable_503', again);
    return;
  }
  let same = false;
  try {
    same = (again.status === 201 || again.status === 202) && again.json('orderId') === first.json('orderId');
  } catch (e) {
    same = false;
  }
  if (!same) unexpected(tags, 'replay_mismatch', again);
}

function poll(accepted, shopper, sent, tags) {
  const location = accepted.headers['Location'];
  const url = location.startsWith('http') ? location : `${plan.baseUrl}${location}`;
  const params = { headers: { Authorization: `Bearer ${shopper.token}` }, tags: Object.assign({ name: 'order-status' }, tags), timeout: '10s' };
  const deadline = sent + plan.pollBoundSeconds * 1000;
  let wait = retryAfter(accepted, 1);
  while (Date.now() + wait * 1000 < deadline) {
    sleep(wait);
    const res = http.get(url, params);
    let status = null;
    if (res.status === 200) {
      status = res.json('status');
      if (FINAL.includes(status)) {
        m.asyncFinal.add(1, Object.assign({ status }, tags));
        if (status === 'CONFIRMED') m.timeToConfirm.add(Date.now() - sent, Object.assign({ path: 'ASYNC' }, tags));
        if (status === 'FAILED') unexpected(tags, 'order_failed', res);
        return;
      }
    } else if (res.status !== 404 && res.status !== 503) {
      unexpected(tags, `poll_${res.status}`, res);
      return;
    }
    wait = retryAfter(res, 1);
  }
  unexpected(tags, 'not_final_in_bound', null);
}
