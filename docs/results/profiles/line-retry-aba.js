import http from 'k6/http';
// 1,500 requests/s for 20 s: GET /ping, or a keyed retry carrying its Line-Place behind the front.
export const options = {
  discardResponseBodies: true,
  scenarios: { s: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE || 1500), timeUnit: '1s', duration: __ENV.DUR || '20s', preAllocatedVUs: 200, maxVUs: 400 } },
};
export default function () {
  const h = { Authorization: `Bearer ${__ENV.TOKEN}` };
  if (__ENV.KIND === 'ping') {
    http.get('http://127.0.0.1:8080/api/v1/ping', { headers: h });
  } else {
    h['Content-Type'] = 'application/json';
    h['Idempotency-Key'] = __ENV.KEY;
    h['Line-Place'] = __ENV.PLACE;
    http.post(`http://127.0.0.1:8080/api/v1/sales/${__ENV.SALE}/orders`, '{"quantity":1}', { headers: h });
  }
}
