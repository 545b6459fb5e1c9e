"""What the load, fault, deploy and ops tools share (python3 standard library only): one definition of a
percentile (percentiles.py) and one way to make an HTTP call (web.py).

A tool adds this folder's parent to its path, from its own location, then imports from here:

    sys.path.insert(0, str(Path(__file__).resolve().parents[N] / "scripts" / "pylib"))
    from flashtools.percentiles import percentile
"""
