"""The order API's bearer tokens (HS256 JWT), minted as the API checks them: one place for every tool.

The secret is APP_SECURITY_JWT_SECRET, with the same local default as the API (application.yml).
scripts/token.py is this module's command line.
"""
import base64
import hashlib
import hmac
import json
import os
import time

DEFAULT_SECRET = "local-dev-secret-0123456789abcdef-change-me"
DEFAULT_TTL = 12 * 3600  # seconds: a drill or a day of local work


def secret():
    return os.environ.get("APP_SECURITY_JWT_SECRET", DEFAULT_SECRET)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(subject: str, scope: str, key: str | None = None, ttl: int = DEFAULT_TTL) -> str:
    """A token for subject with scope ("orders" for a shopper, "admin"), signed with key (default: secret())."""
    now = int(time.time())
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": subject, "scope": scope, "iat": now, "exp": now + ttl}
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new((key or secret()).encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


def admin(ttl: int = DEFAULT_TTL) -> str:
    """An operations token (scope admin)."""
    return mint("ops-admin", "admin", ttl=ttl)


def shopper(user: str, ttl: int = DEFAULT_TTL) -> str:
    """A shopper's token (scope orders)."""
    return mint(user, "orders", ttl=ttl)


def shoppers(count: int, prefix: str, ttl: int = DEFAULT_TTL) -> list[dict]:
    """[{user, token}] for shoppers prefix1..prefixN: the list the k6 drills read."""
    key = secret()
    return [{"user": f"{prefix}{i}", "token": mint(f"{prefix}{i}", "orders", key, ttl)} for i in range(1, count + 1)]


def write_shoppers(path: str, count: int, prefix: str) -> str:
    """Writes shoppers(count, prefix) as JSON to path (bearer tokens: the caller deletes it after the run)."""
    with open(path, "w") as f:
        json.dump(shoppers(count, prefix), f)
    return path
