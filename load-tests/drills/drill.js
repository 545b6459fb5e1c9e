// The one k6 entry point for every drill; load-tests/run.sh writes the plan (PLAN=plan.json) that
// picks the shape (steady, spike, ramp), the modes and the limits. Open model only: arrival-rate executors.
import { plan, scenarios, thresholds } from '../lib/plan.js';
import { setMode, checkConservation } from '../lib/admin.js';
import { summary } from '../lib/report.js';

export { ping, purchase } from '../lib/shopper.js';

export const options = {
  scenarios: scenarios(),
  thresholds: thresholds(),
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  setupTimeout: '60s',
  teardownTimeout: `${plan.finalBoundSeconds + 60}s`,
  discardResponseBodies: false,
  noConnectionReuse: false,
};

export function setup() {
  if (plan.modes.length > 0) setMode(plan.modes[0]);
  // The wall-clock start of the first phase, for tools that time what follows it (run.sh bench: drain).
  console.log(`[phases] start ${Date.now()}`);
}

export function switchMode() {
  setMode(__ENV.MODE);
}

export function teardown() {
  checkConservation();
}

export function handleSummary(data) {
  return summary(data);
}
