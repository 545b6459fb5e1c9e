// The drill plan written by load-tests/run.sh (sales, tokens, shape, limits), and the k6 scenarios and
// thresholds built from it. One phase per mode, run one after the other, after an optional /ping baseline.

export const plan = JSON.parse(open(__ENV.PLAN));

export const GAP_SECONDS = plan.gapSeconds;
export const CODES = ['SOLD_OUT', 'PURCHASE_LIMIT_REACHED', 'SALE_NOT_ACTIVE', 'LINE', 'UNAVAILABLE', 'TOO_MANY_REQUESTS', 'OTHER'];

/** The arrival-rate shape of one phase: executor fields, its length, and its steps (ramp only). */
export function shape() {
  const s = plan.shape;
  if (s.kind === 'steady') {
    return {
      seconds: s.seconds,
      peak: s.rate,
      steps: [],
      executor: { executor: 'constant-arrival-rate', rate: s.rate, timeUnit: '1s', duration: `${s.seconds}s` },
    };
  }
  if (s.kind === 'spike') {
    // Idle to peak in one second, hold, then stop: the doors open.
    return {
      seconds: 1 + s.holdSeconds + 1,
      peak: s.peak,
      steps: [],
      executor: {
        executor: 'ramping-arrival-rate',
        startRate: 0,
        timeUnit: '1s',
        stages: [
          { duration: '1s', target: s.peak },
          { duration: `${s.holdSeconds}s`, target: s.peak },
          { duration: '1s', target: 0 },
        ],
      },
    };
  }
  if (s.kind === 'ramp') {
    // Step by step: a one-second climb to each step's rate, then a hold; requests are tagged by step.
    const steps = [];
    for (let i = 0; i < s.steps; i++) {
      steps.push(Math.round(s.from + (i * (s.to - s.from)) / Math.max(1, s.steps - 1)));
    }
    const stages = [];
    for (const rate of steps) {
      stages.push({ duration: '1s', target: rate });
      stages.push({ duration: `${s.stepSeconds - 1}s`, target: rate });
    }
    return {
      seconds: s.steps * s.stepSeconds,
      peak: s.to,
      steps,
      stepSeconds: s.stepSeconds,
      executor: { executor: 'ramping-arrival-rate', startRate: steps[0], timeUnit: '1s', stages },
    };
  }
  throw new Error(`unknown shape ${s.kind}`);
}

/** Phases in order: [{name, mode, start, seconds}], PING first when the baseline is on. */
export function phases() {
  const sh = shape();
  const list = [];
  let start = 0;
  const modes = (plan.baseline ? ['PING'] : []).concat(plan.modes);
  modes.forEach((mode, i) => {
    list.push({ name: `ph${i}_${mode}`, mode, start, seconds: sh.seconds });
    start += sh.seconds + GAP_SECONDS;
  });
  return list;
}

export function scenarios() {
  const sh = shape();
  const result = {};
  phases().forEach((phase, i) => {
    const purchase = phase.mode !== 'PING';
    result[phase.name] = Object.assign({}, sh.executor, {
      exec: purchase ? 'purchase' : 'ping',
      startTime: `${phase.start}s`,
      preAllocatedVUs: purchase ? plan.preAllocatedVUs : Math.min(plan.preAllocatedVUs, 50),
      maxVUs: plan.maxVUs,
      // Pollers may still be waiting for their order to be final when the phase ends.
      gracefulStop: purchase ? `${plan.pollBoundSeconds + 2}s` : '5s',
      tags: { mode: phase.mode },
      env: { MODE: phase.mode },
    });
    // The first mode is set in setup(); later ones right after the previous phase ends.
    const previous = i > 0 ? phases()[i - 1] : null;
    if (purchase && previous && previous.mode !== 'PING') {
      result[`switch_${phase.mode}`] = {
        executor: 'shared-iterations',
        exec: 'switchMode',
        vus: 1,
        iterations: 1,
        startTime: `${previous.start + previous.seconds}s`,
        maxDuration: `${GAP_SECONDS}s`,
        tags: { mode: phase.mode, control: 'switch' },
        env: { MODE: phase.mode },
      };
    }
  });
  return result;
}

/**
 * Thresholds that fail the drill, plus always-true ones whose only purpose is to make k6 keep the
 * per-mode (and per-step) sub-metrics for the report.
 */
export function thresholds() {
  const t = {
    unexpected: ['count==0'],
    invariant_ok: ['rate==1'],
  };
  const keep = (name, expr) => {
    t[name] = t[name] || [];
    t[name].push(expr);
  };
  const sh = shape();
  for (const phase of phases()) {
    const m = phase.mode;
    keep(`accept_latency{mode:${m}}`, plan.p99Threshold ? `p(99)<${plan.p99Ms}` : 'p(99)>=0');
    keep(`offered{mode:${m}}`, 'count>=0');
    keep(`served{mode:${m}}`, 'count>=0');
    keep(`unexpected{mode:${m}}`, 'count>=0');
    keep(`step_error{mode:${m}}`, 'rate>=0');
    keep(`dropped_iterations{scenario:${phase.name}}`, 'count>=0');
    for (const step of sh.steps) {
      keep(`accept_latency{mode:${m},step:${step}}`, 'p(99)>=0');
      keep(`step_error{mode:${m},step:${step}}`, 'rate>=0');
      keep(`offered{mode:${m},step:${step}}`, 'count>=0');
      keep(`served{mode:${m},step:${step}}`, 'count>=0');
    }
    if (m === 'PING') continue;
    const sale = plan.sales[m];
    // More units accepted than the sale had is overselling, whatever the status codes said.
    keep(`units_accepted{mode:${m}}`, `count<=${sale.stock}`);
    keep(`accepted{mode:${m}}`, 'count>=0');
    keep(`accepted{mode:${m},path:SYNC}`, 'count>=0');
    keep(`accepted{mode:${m},path:ASYNC}`, 'count>=0');
    keep(`time_to_confirm{mode:${m}}`, 'p(95)>=0');
    keep(`accepted_latency{mode:${m}}`, 'p(99)>=0');
    keep(`refusal_latency{mode:${m}}`, 'p(99)>=0');
    keep(`refusal_retry_after{mode:${m}}`, 'rate>=0');
    for (const status of ['CONFIRMED', 'REJECTED', 'FAILED']) keep(`async_final{mode:${m},status:${status}}`, 'count>=0');
    keep(`time_to_confirm{mode:${m},path:ASYNC}`, 'p(95)>=0');
    keep(`invariant_ok{mode:${m}}`, 'rate>=0');
    for (const code of CODES) keep(`refusals{mode:${m},code:${code}}`, 'count>=0');
    for (const g of ['final_confirmed', 'final_queued', 'final_redis_remaining', 'final_db_remaining', 'final_rejected', 'final_failed', 'drain_seconds']) {
      keep(`${g}{mode:${m}}`, 'value>-1000000000');
    }
  }
  return t;
}
