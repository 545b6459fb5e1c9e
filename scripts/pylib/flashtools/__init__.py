"""What the load, fault, deploy and ops tools share (python3 standard library only): one definition of a
percentile (percentiles.py), one way to make an HTTP call (web.py), one way to mint the API's tokens
(tokens.py, whose command line is scripts/token.py), the stack a tool drills (stack.py: a drill's
options, waiting for an app's readiness) and one reading of k6's summary of a drill (k6summary.py).

A tool adds this folder's parent to its path, from its own location, then imports from here:

    sys.path.insert(0, str(Path(__file__).resolve().parents[N] / "scripts" / "pylib"))
    from flashtools.percentiles import percentile
"""
