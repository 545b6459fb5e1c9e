// Custom metrics. Every sample carries the phase's `mode` tag (PING, SYNC, ASYNC, AUTO) from its scenario.
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';

export const offered = new Counter('offered'); // iterations started: the arrival rate actually offered
export const served = new Counter('served'); // answered with a 2xx or an expected refusal
export const acceptLatency = new Trend('accept_latency', true); // time-to-accept: the POST's answer
export const timeToConfirm = new Trend('time_to_confirm', true); // POST sent to CONFIRMED seen
export const acceptedLatency = new Trend('accepted_latency', true); // answer time of 201/202 only
export const refusalLatency = new Trend('refusal_latency', true); // answer time of 503/429 (overload refusals)
export const refusalRetryAfter = new Rate('refusal_retry_after'); // share of 503/429 that carried Retry-After
export const accepted = new Counter('accepted'); // orders accepted (201/202), replays excluded; tag path
export const unitsAccepted = new Counter('units_accepted');
export const refusals = new Counter('refusals'); // tag code
export const unexpected = new Counter('unexpected'); // tag reason: fails the drill
export const stepError = new Rate('step_error'); // per ramp step: unexpected or 503, for the knee
export const asyncFinal = new Counter('async_final'); // tag status: how polled orders ended

export const invariantOk = new Rate('invariant_ok');
export const finalConfirmed = new Gauge('final_confirmed');
export const finalQueued = new Gauge('final_queued');
export const finalRedisRemaining = new Gauge('final_redis_remaining');
export const finalDbRemaining = new Gauge('final_db_remaining');
export const finalRejected = new Gauge('final_rejected');
export const finalFailed = new Gauge('final_failed');
export const drainSeconds = new Gauge('drain_seconds');
