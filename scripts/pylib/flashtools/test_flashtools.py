"""Tests of the tools' shared library: one percentile, and HTTP calls against a local server."""
import http.server
import json
import threading
import urllib.error

import pytest

from flashtools.percentiles import percentile
from flashtools import k6summary, tokens
from flashtools.web import answer, call, exchange, get_text


def test_the_percentile_is_the_nearest_rank_on_the_sorted_values():
    assert percentile([4, 1, 3, 2], 50) == 3
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile(list(range(1, 101)), 100) == 100
    assert percentile([7.5], 99) == 7.5
    assert percentile([], 50) is None


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        answers = {"/json": (200, b'{"a": 1}'), "/text": (200, b"metric 1\n"), "/empty": (204, b""),
                   "/missing": (404, b'{"code": "NOT_FOUND"}'),
                   "/actuator/health/readiness": (200, b'{"status": "UP"}')}
        status, body = answers[self.path]
        self.send_response(status)
        self.send_header("Retry-After", "1")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers["Content-Length"])
        seen = {"body": json.loads(self.rfile.read(length)), "authorization": self.headers["Authorization"],
                "contentType": self.headers["Content-Type"], "key": self.headers.get("Idempotency-Key")}
        payload = json.dumps(seen).encode()
        self.send_response(201)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_call_sends_json_with_a_bearer_token_and_reads_the_answer(base):
    seen = call("POST", base + "/orders", {"quantity": 1}, token="t0k", headers={"Idempotency-Key": "k1"})
    assert seen == {"body": {"quantity": 1}, "authorization": "Bearer t0k", "contentType": "application/json",
                    "key": "k1"}
    assert call("GET", base + "/text") == "metric 1\n"
    assert call("GET", base + "/empty") is None


def test_call_raises_on_an_error_status_and_exchange_returns_it(base):
    with pytest.raises(urllib.error.HTTPError):
        call("GET", base + "/missing")
    status, raw, headers = exchange("GET", base + "/missing")
    assert (status, json.loads(raw), headers["Retry-After"]) == (404, {"code": "NOT_FOUND"}, "1")


def test_answer_parses_the_body_of_any_status(base):
    assert answer("GET", base + "/missing") == (404, {"code": "NOT_FOUND"})
    assert answer("GET", base + "/text") == (200, None)
    assert answer("GET", base + "/empty") == (204, None)


def test_tokens_are_signed_with_the_apis_secret_and_carry_their_scope(monkeypatch):
    import base64
    import hashlib
    import hmac

    monkeypatch.setenv("APP_SECURITY_JWT_SECRET", "s3cret")
    header, payload, signature = tokens.shopper("alice").split(".")
    expected = hmac.new(b"s3cret", f"{header}.{payload}".encode(), hashlib.sha256).digest()
    assert base64.urlsafe_b64decode(signature + "==") == expected
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    assert (claims["sub"], claims["scope"]) == ("alice", "orders")
    assert json.loads(base64.urlsafe_b64decode(tokens.admin().split(".")[1] + "=="))["scope"] == "admin"
    assert [s["user"] for s in tokens.shoppers(2, "u")] == ["u1", "u2"]


def test_basic_auth_and_text(base):
    assert get_text(base + "/text", auth=("guest", "guest")) == "metric 1\n"


def test_no_answer_raises_an_os_error():
    with pytest.raises(OSError):
        exchange("GET", "http://127.0.0.1:9/", timeout=1)


def test_the_stack_is_ready_when_its_readiness_answers_2xx(base):
    from flashtools import stack

    assert stack.is_ready(base)
    stack.wait_ready(base, timeout=1)
    assert not stack.is_ready("http://127.0.0.1:9", timeout=1)
    with pytest.raises(RuntimeError, match="not ready after"):
        stack.wait_ready("http://127.0.0.1:9", timeout=0.3, poll=0.1)


def test_a_k6_summary_gives_the_drills_answers_by_kind(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"metrics": {
        "answers_expected": {"values": {"count": 7}}, "answers_unavailable": {"values": {"count": 2}},
        "http_req_duration": {"values": {"p(99)": 12.5}}}}))

    metrics = k6summary.read(str(path))

    assert k6summary.answers(metrics) == {"expected": 7, "unavailable": 2, "other": 0, "dropped": 0}
    assert k6summary.values(metrics, "http_req_duration") == {"p(99)": 12.5}


def test_a_missing_k6_summary_counts_no_answers(tmp_path):
    metrics = k6summary.read(str(tmp_path / "none.json"))

    assert k6summary.answers(metrics) == {"expected": 0, "unavailable": 0, "other": 0, "dropped": 0}
