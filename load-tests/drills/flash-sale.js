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
// arrivals when set. AGAIN > 0 (the drill's line-retries step): a shopper told 503 with a Line-Place asks
// again with it at once, up to AGAIN times, each answer counted: line answers as a crowd's retries send them.
// RETRIES > 0: a shopper told 503 does what the contract tells a client, up to RETRIES
// times: waits its Retry-After and asks again, carrying the place in the sale's line it was given
// (Line-Place) when CARRY=1. LOG=1 prints one line per shopper for the drill to read: arrival, final
// status, final code, first attempt's start (ms since the epoch), final attempt's duration (ms), order id,
// attempts, final attempt's start, place in the line (or -), when the final answer was in (ms since the
// epoch: the duration leaves out connecting, and a line answer closes its connection), and the order's
// createdAt (ms; when its unit was reserved, by the API's clock on this box) or -. SUMMARY is where the k6
// summary goes (JSON).
import http from 'k6/http';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { SharedArray } from 'k6/data';
import { setTimeout } from 'k6/timers';

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
const AGAIN = Number(env.AGAIN || 0);
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
// A crowd that retries (RETRIES > 0, arrivals bounded by ARRIVALS): each shopper is a chain of promises,
// not a VU, so a shopper waiting out its Retry-After holds nothing. (With a VU each, 20,000 shoppers
// selling 10,000 units overran 15,000 VUs, and k6 dropped thousands of arrivals.) CROWD_VUS VUs share the
// arrivals: VU v starts shoppers v, v + CROWD_VUS, ... each at its own instant of the step, from one t0.
const CROWD = KIND === 'purchase' && RETRIES > 0 && ARRIVALS > 0;
const CROWD_VUS = Number(env.CROWD_VUS || 100);
const scenario = CROWD
  ? {
      executor: 'per-vu-iterations', vus: CROWD_VUS, iterations: 1, exec: 'crowd',
      maxDuration: `${Math.ceil(ARRIVALS / RATE) + 180}s`,
    }
  : RAMP > 0
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

// The crowd's common start: one second after setup, when every VU is up.
export function setup() {
  return { t0: Date.now() + 1000 };
}

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function crowd(data) {
  const shoppers = [];
  for (let i = exec.vu.idInTest - 1; i < ARRIVALS; i += CROWD_VUS) {
    await wait(data.t0 + (i * 1000) / RATE - Date.now());
    shoppers.push(shopper(i));
  }
  await Promise.all(shoppers);
}

// One shopper of the crowd, as the contract tells a client: on 503, wait Retry-After and ask again with
// the place it was given, up to RETRIES times. A request that got no answer is sent again at once, as a
// browser does when the server closed the idle connection it reused (Tomcat closes them after 3 s; Go
// resends only requests it may replay, and an unkeyed POST is not one). So is a keyed one the balancer
// answered 502 or 504 for (the instance died with it): its Idempotency-Key makes it the same purchase.
async function shopper(i) {
  const URL = urlOf(i);
  const n = (OFFSET + i) % tokens.length;
  const headers = { Authorization: `Bearer ${tokens[n].token}`, 'Content-Type': 'application/json' };
  const keyed = (n * 7919) % 1000 < KEYED * 1000;
  if (keyed) headers['Idempotency-Key'] = `${env.RUN_ID}-${n}`;
  const unanswered = (res) => res.status === 0 || (keyed && (res.status === 502 || res.status === 504));
  const started = Date.now();
  let lastStart = started;
  let attempts = 1;
  let place = '-';
  let res = await http.asyncRequest('POST', URL, '{"quantity":1}', { headers });
  while ((res.status === 503 || unanswered(res)) && attempts <= RETRIES) {
    const linePlace = res.headers['Line-Place'];
    if (linePlace && CARRY) {
      headers['Line-Place'] = linePlace;
      place = linePlace.split('.')[1];
    }
    if (res.status === 503) await wait(Number(res.headers['Retry-After'] || 1) * 1000);
    attempts += 1;
    lastStart = Date.now();
    res = await http.asyncRequest('POST', URL, '{"quantity":1}', { headers });
  }
  if (place === '-' && res.headers['Line-Place']) place = res.headers['Line-Place'].split('.')[1];
  answer(i, res, started, attempts, lastStart, place);
}

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
    for (let k = 0; k < AGAIN && res.status === 503 && res.headers['Line-Place']; k++) {
      count(res);
      headers['Line-Place'] = res.headers['Line-Place'];
      attempts += 1;
      lastStart = Date.now();
      res = http.post(URL, '{"quantity":1}', { headers });
    }
    if (res.headers['Line-Place']) place = res.headers['Line-Place'].split('.')[1];
  }
  answer(i, res, started, attempts, lastStart, place);
}

function count(res) {
  if (EXPECTED.includes(res.status)) expected.add(1);
  else if (res.status === 503) unavailable.add(1);
  else other.add(1);
}

// Counts the final answer, and logs it (LOG=1) for the drill to read.
function answer(i, res, started, attempts, lastStart, place) {
  const answered = Date.now();
  count(res);
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
