"""Make this folder's helper modules (``engine_oracle``, ``engine_gen``) importable without tests/__init__.py."""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
