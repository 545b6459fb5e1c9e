// The fault drill's crowd (load-tests/faults/drill.sh): shoppers arrive at a constant rate, each buys once with
// a fresh Idempotency-Key and, like a well-behaved storefront, retries a 503/429 (honouring Retry-After)
// or a lost answer (connection refused, reset, timeout, 502/504) with the very same key until it gets a
// final answer or gives up. Every key and every answer is logged as one JSON line (k6 --console-output,
// --log-format raw): the ledger that load-tests/faults/check.py holds the system to.
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import { SharedArray } from 'k6/data';

const plan = JSON.parse(open(__ENV.PLAN));
// One sale, or several bought in turn (arrival i buys from sale i mod n): every group-commit batch then
// holds orders of each (faults/drill.sh's two-sales).
const sales = plan.saleIds || [plan.saleId];
const shoppers = new SharedArray('shoppers', () => JSON.parse(open(plan.tokensFile)));

export const options = {
  scenarios: {
    crowd: {
      executor: 'constant-arrival-rate',
      rate: plan.rate,
      timeUnit: '1s',
      duration: `${plan.seconds}s`,
      preAllocatedVUs: plan.preAllocatedVUs,
      maxVUs: plan.maxVUs,
      // A shopper still retrying when the arrivals stop may finish (up to its give-up time).
      gracefulStop: `${plan.giveUpSeconds + 15}s`,
    },
  },
  // The drill's verdict is the checker's, from the ledger; k6 only has to run the crowd.
  thresholds: {},
  summaryTrendStats: ['med', 'p(95)', 'p(99)', 'max'],
};

// Everything is an answer to log, nothing a k6 "failure".
http.setResponseCallback(http.expectedStatuses({ min: 100, max: 599 }));

const FINAL = [201, 202, 400, 401, 403, 404, 409, 413, 415, 422];

function field(res, name) {
  try {
    return res.json(name) || null;
  } catch (e) {
    return null;
  }
}

function retryAfter(res) {
  const value = parseFloat(res.headers['Retry-After']);
  return Number.isFinite(value) && value >= 0 ? Math.min(value, 10) : 1;
}

export default function () {
  const i = exec.scenario.iterationInTest;
  const shopper = shoppers[Math.floor(Math.random() * shoppers.length)];
  const key = `${plan.runId}-${i}`;
  const quantity = Math.random() < plan.multiUnitFraction ? 2 : 1;
  const sale = sales[i % sales.length];
  const url = `${plan.baseUrl}/api/v1/sales/${sale}/orders`;
  const body = JSON.stringify({ quantity });
  const params = {
    headers: { Authorization: `Bearer ${shopper.token}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
    timeout: `${plan.requestTimeoutSeconds}s`,
    tags: { name: 'purchase' },
  };
  const first = Date.now();
  console.log(JSON.stringify({ ev: 'key', k: key, u: shopper.user, q: quantity, sale, t: first }));
  for (let attempt = 1; ; attempt++) {
    const res = http.post(url, body, params);
    const status = res.status;
    console.log(JSON.stringify({
      ev: 'answer', k: key, a: attempt, s: status, c: field(res, 'code'), o: field(res, 'orderId'),
      st: field(res, 'status'), e: status === 0 ? res.error_code : undefined, t: Date.now(), ms: Math.round(res.timings.duration),
    }));
    if (FINAL.includes(status)) return;
    // 503/429 say when to come back; anything else (0, 5xx) is a lost answer: come back in a second.
    const wait = status === 503 || status === 429 ? retryAfter(res) : 1;
    if (Date.now() + wait * 1000 - first > plan.giveUpSeconds * 1000) {
      console.log(JSON.stringify({ ev: 'gave-up', k: key, a: attempt, t: Date.now() }));
      return;
    }
    sleep(wait * (0.8 + 0.4 * Math.random()));
  }
}
