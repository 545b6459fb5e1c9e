#!/usr/bin/env python3
"""Prints a bearer token (HS256 JWT) for the order API.

  scripts/token.py --user alice            a shopper token (scope "orders")
  scripts/token.py --admin                 an operations token (scope "admin")
  scripts/token.py --users 500 --prefix u  a JSON list of 500 shopper tokens u1..u500 (for drills)

The secret is APP_SECURITY_JWT_SECRET, with the same local default as the API.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import time

DEFAULT_SECRET = "local-dev-secret-0123456789abcdef-change-me"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(subject: str, scope: str, secret: str, ttl: int) -> str:
    now = int(time.time())
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": subject, "scope": scope, "iat": now, "exp": now + ttl}
    payload = b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", help="shopper user id (the token's sub)")
    who.add_argument("--admin", action="store_true", help="an admin token")
    who.add_argument("--users", type=int, help="print a JSON list of this many shopper tokens")
    parser.add_argument("--prefix", default="shopper-", help="user id prefix with --users")
    parser.add_argument("--ttl", type=int, default=12 * 3600, help="lifetime in seconds")
    args = parser.parse_args()
    secret = os.environ.get("APP_SECURITY_JWT_SECRET", DEFAULT_SECRET)
    if args.users:
        tokens = [{"user": f"{args.prefix}{i}", "token": mint(f"{args.prefix}{i}", "orders", secret, args.ttl)}
                  for i in range(1, args.users + 1)]
        json.dump(tokens, sys.stdout)
    elif args.admin:
        print(mint("ops-admin", "admin", secret, args.ttl))
    else:
        print(mint(args.user, "orders", secret, args.ttl))
    return 0


if __name__ == "__main__":
    sys.exit(main())
