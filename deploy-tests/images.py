"""Whether an image reference names one build: shared by deploy_checks.py (Compose, the overlays) and
sale_day_checks.py (the release), so neither imports the other."""
from __future__ import annotations

import re


def image_is_pinned(image: str, overlay: str) -> bool:
    """A digest, or a tag naming a release: never :latest or no tag; third-party images down to the patch
    release; the applications' own images in prod by release version."""
    if "@sha256:" in image:
        return True
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return False
    name, tag = image.rsplit(":", 1)
    if tag == "latest":
        return False
    if name.startswith("flashsale/"):
        return overlay != "prod" or re.fullmatch(r"v?\d+\.\d+\.\d+([-.+][\w.]+)?", tag) is not None
    if re.search(r"(^|/)postgres(ql)?$", name):
        return re.match(r"\d+\.\d+", tag) is not None  # PostgreSQL's releases are MAJOR.MINOR (15.14)
    return re.match(r"v?\d+\.\d+\.\d+", tag) is not None
