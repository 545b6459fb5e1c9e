#!/usr/bin/env python3
"""Prints a bearer token (HS256 JWT) for the order API.

  scripts/token.py --user alice            a shopper token (scope "orders")
  scripts/token.py --admin                 an operations token (scope "admin")
  scripts/token.py --users 500 --prefix u  a JSON list of 500 shopper tokens u1..u500 (for drills)

The secret is APP_SECURITY_JWT_SECRET, with the same local default as the API. The tokens are minted by
scripts/pylib/flashtools/tokens.py, which the Python tools import.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "pylib"))
from flashtools import tokens  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", help="shopper user id (the token's sub)")
    who.add_argument("--admin", action="store_true", help="an admin token")
    who.add_argument("--users", type=int, help="print a JSON list of this many shopper tokens")
    parser.add_argument("--prefix", default="shopper-", help="user id prefix with --users")
    parser.add_argument("--ttl", type=int, default=tokens.DEFAULT_TTL, help="lifetime in seconds")
    args = parser.parse_args()
    if args.users:
        json.dump(tokens.shoppers(args.users, args.prefix, args.ttl), sys.stdout)
    elif args.admin:
        print(tokens.admin(args.ttl))
    else:
        print(tokens.shopper(args.user, args.ttl))
    return 0


if __name__ == "__main__":
    sys.exit(main())
