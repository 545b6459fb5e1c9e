import http from 'k6/http';
export const options = {
  noConnectionReuse: __ENV.REUSE === '0',
  scenarios: { s: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE || 1500), timeUnit: '1s',
    duration: (__ENV.SECONDS || '20') + 's', preAllocatedVUs: 200, maxVUs: 400 } },
  summaryTrendStats: ['p(50)', 'p(99)'],
};
const token = __ENV.TOKEN;
export default function () {
  http.get('http://127.0.0.1:8080/api/v1/ping', { headers: { Authorization: `Bearer ${token}` } });
}
