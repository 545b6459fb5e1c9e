"""One way to make an HTTP call from the tools (urllib only): JSON bodies, a bearer token or basic auth.

exchange() returns every HTTP answer, errors included, as (status, body bytes, headers) and raises OSError
(urllib.error.URLError, TimeoutError, a reset) only when no answer came; answer() is the same with the body
parsed (JSON, or None when it is empty or not JSON), as the tests read a shopper's answers. call() is for the admin and
toxiproxy APIs, where anything but a 2xx is the caller's bug: it raises urllib.error.HTTPError then, and
returns the parsed JSON, the text, or None for an empty body.
"""
import base64
import http.client
import json
import urllib.error
import urllib.request


def _request(method, url, body, token, auth, headers):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    elif auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    return request


def exchange(method, url, body=None, token=None, auth=None, headers=None, timeout=10):
    """(status, body bytes, response headers) of any answer, 4xx and 5xx included."""
    try:
        with urllib.request.urlopen(_request(method, url, body, token, auth, headers), timeout=timeout) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        try:
            raw = error.read()
        except http.client.HTTPException:  # the server died mid-answer: the status, no body
            raw = b""
        return error.code, raw, error.headers


def answer(method, url, body=None, token=None, auth=None, headers=None, timeout=10):
    """(status, parsed JSON body or None) of any answer, 4xx and 5xx included; OSError when none came."""
    status, raw, _ = exchange(method, url, body, token, auth, headers, timeout)
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, None


def call(method, url, body=None, token=None, auth=None, headers=None, timeout=10):
    """The parsed JSON of a 2xx answer (text if it is not JSON, None if empty); raises HTTPError otherwise."""
    with urllib.request.urlopen(_request(method, url, body, token, auth, headers), timeout=timeout) as response:
        raw = response.read()
    if not raw:
        return None
    if raw.lstrip()[:1] in (b"{", b"[", b'"') or raw.strip() in (b"null", b"true", b"false"):
        return json.loads(raw)
    return raw.decode()


def get_text(url, timeout=3, auth=None, token=None):
    """The body of a GET as text (a Prometheus scrape, a management API); raises HTTPError on a non-2xx."""
    with urllib.request.urlopen(_request("GET", url, None, token, auth, None), timeout=timeout) as response:
        return response.read().decode()
