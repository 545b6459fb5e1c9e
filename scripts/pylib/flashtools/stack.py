"""The stack a tool drills: the options every drill run by load-tests/run.sh takes, and waiting for an app
the tool started until its readiness answers."""
import argparse
import os
import time

from flashtools import web

READINESS = "/actuator/health/readiness"


def drill_parser(prog, doc):
    """The parser of a drill run by load-tests/run.sh (prog), its help from doc, with add_drill_arguments."""
    parser = argparse.ArgumentParser(prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_drill_arguments(parser)
    return parser


def add_drill_arguments(parser, stack=True):
    """--base-url, --k6 and --out (run.sh passes them), and run.sh's own --no-stack and --keep-stack."""
    parser.add_argument("--base-url", default=os.environ.get("FLASHSALE_BASE_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--k6", required=True)
    parser.add_argument("--out", required=True)
    if stack:
        parser.add_argument("--no-stack", action="store_true", help="(run.sh) never start the stack")
        parser.add_argument("--keep-stack", action="store_true", help="(run.sh) leave a stack it started running")


def is_ready(base_url, timeout=2):
    """Whether the app at base_url answers its readiness with a 2xx."""
    try:
        return 200 <= web.exchange("GET", base_url.rstrip("/") + READINESS, timeout=timeout)[0] < 300
    except OSError:
        return False


def wait_ready(base_url, process=None, timeout=120, poll=0.5, what="the app"):
    """Waits until base_url is ready; raises RuntimeError if process (a Popen) exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode})")
        if is_ready(base_url):
            return
        time.sleep(poll)
    raise RuntimeError(f"{what} not ready after {timeout} s")
