// One step of the flash-sale drill (load-tests/bench/flash_sale.py runs it; see load-tests/README.md):
// an open model of shoppers, each arrival one shopper, so that the arrival order is known (the k6
// iteration number picks the shopper: token i is shopper prefix(i+1)).
//
//   KIND=ping       GET /api/v1/ping (the baseline), expecting 204
//   KIND=purchase   POST one unit of SALE_ID; a share KEYED of the shoppers send an Idempotency-Key. With
//                   SALE_IDS (comma-separated) instead, arrival i buys from the (i mod their count)-th sale:
//                   the many-sales drill's crowd spread over its sales (load-tests/bench/many_sales.py)
//
// RATE arrivals/s for SECONDS (after RAMP seconds from 0 to RATE, when RAMP > 0); at most ARRIVALS
// arrivals when set. RETRIES > 0: a shopper told 503 does what the contract tells a client, up to RETRIES
// times: waits its Retry-After and asks again, carrying the place in the sale's line it was given
// (Line-Place) when CARRY=1. LOG=1 prints one line per shopper for the drill to read: arrival, final
// status, final code, first attempt's start (ms since the epoch), final attempt's duration (ms), order id,
// attempts, final attempt's start, place in the line (or -), when the final answer was in (ms since the
// epoch: the duration leaves out connecting, and a line answer closes its connection), and the order's
// createdAt (ms; when its unit was reserved, by the API's clock on this box) or -. SUMMARY is where the k6
// summary goes (JSON).
import http from 'k6/http';
import { sleep } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { SharedArray } from 'k6/data';

const env = __ENV;
const KIND = env.KIND || 'purchase';
const RATE = Number(env.RATE || 100);
const SECONDS = Number(env.SECONDS || 10);
const RAMP = Number(env.RAMP || 0);
const ARRIVALS = Number(env.ARRIVALS || 0);
const OFFSET = Number(env.OFFSET || 0);
const KEYED = Number(env.KEYED || 0.7);
const LOG = env.LOG === '1';
const RETRIES = Number(env.RETRIES || 0);
const CARRY = env.CARRY !== '0';
const SALES = (env.SALE_IDS || env.SALE_ID || '').split(',');
const urlOf = (i) => (KIND === 'ping'
  ? `${env.BASE_URL}/api/v1/ping`
  : `${env.BASE_URL}/api/v1/sales/${SALES[i % SALES.length]}/orders`);
const EXPECTED = KIND === 'ping' ? [204] : (env.EXPECT || '201,202,409').split(',').map(Number);

const tokens = new SharedArray('tokens', () => JSON.parse(open(env.TOKENS)));
const expected = new Counter('answers_expected');
const unavailable = new Counter('answers_unavailable');
const other = new Counter('answers_other');

http.setResponseCallback(http.expectedStatuses(...EXPECTED));

// Enough VUs up front for a second of arrivals waiting on answers: starting VUs mid-step drops arrivals.
const MAX_VUS = Number(env.MAX_VUS || 4000);
const vus = Math.min(MAX_VUS, Math.max(50, Number(env.PRE_VUS || Math.ceil(RATE / 4))));
const scenario = RAMP > 0
  ? {
      executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s', preAllocatedVUs: vus,
      maxVUs: MAX_VUS,
      stages: [{ target: RATE, duration: `${RAMP}s` }, { target: RATE, duration: `${SECONDS}s` }],
    }
  : {
      executor: 'constant-arrival-rate', rate: RATE, timeUnit: '1s', duration: `${SECONDS}s`,
      preAllocatedVUs: vus, maxVUs: MAX_VUS,
      // A shopper who retries may ask for a minute after the last arrival: it is not cut off.
      gracefulStop: RETRIES > 0 ? '120s' : '30s',
    };

export const options = {
  scenarios: { step: scenario },
  discardResponseBodies: !LOG,
  summaryTrendStats: ['avg', 'p(50)', 'p(90)', 'p(99)', 'max', 'count'],
  noConnectionReuse: false,
};

export default function () {
  const i = exec.scenario.iterationInTest;
  if (ARRIVALS > 0 && i >= ARRIVALS) return;
  const n = (OFFSET + i) % tokens.length;
  const URL = urlOf(i);
  const headers = { Authorization: `Bearer ${tokens[n].token}` };
  const started = Date.now();
  let res;
  let attempts = 1;
  let lastStart = started;
  let place = '-';
  if (KIND === 'ping') {
    res = http.get(URL, { headers });
  } else {
    headers['Content-Type'] = 'application/json';
    // A deterministic share of the shoppers are keyed, by arrival number.
    if ((n * 7919) % 1000 < KEYED * 1000) headers['Idempotency-Key'] = `${env.RUN_ID}-${n}`;
    res = http.post(URL, '{"quantity":1}', { headers });
    while (res.status === 503 && attempts <= RETRIES) {
      const linePlace = res.headers['Line-Place'];
      if (linePlace && CARRY) {
        headers['Line-Place'] = linePlace;
        place = linePlace.split('.')[1];
      }
      sleep(Number(res.headers['Retry-After'] || 1));
      attempts += 1;
      lastStart = Date.now();
      res = http.post(URL, '{"quantity":1}', { headers });
    }
    if (place === '-' && res.headers['Line-Place']) place = res.headers['Line-Place'].split('.')[1];
  }
  const answered = Date.now();
  if (EXPECTED.includes(res.status)) expected.add(1);
  else if (res.status === 503) unavailable.add(1);
  else other.add(1);
  if (LOG) {
    let code = '-';
    let order = '-';
    let reserved = '-';
    try {
      const body = res.json();
      code = body.code || '-';
      order = body.orderId || '-';
      // goja parses milliseconds, not the API's microseconds
      if (body.createdAt) reserved = Date.parse(body.createdAt.replace(/(\.\d{3})\d+/, '$1'));
    } catch (e) {
      // no JSON body (a reset connection, a timeout)
    }
    console.log(`R ${i} ${res.status} ${code} ${started} ${res.timings.duration.toFixed(2)} ${order} ${attempts} `
      + `${lastStart} ${place} ${answered} ${reserved}`);
  }
}

export function handleSummary(data) {
  return { [env.SUMMARY]: JSON.stringify(data) };
}
