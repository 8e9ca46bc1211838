"""Imported by the app's fork server, whose preload list takes module names only: what every
run imports, imported frozen (``preload.import_frozen``). The first run of a session then
reaches its first step in 1.9 s instead of 2.4 (2 cores, ``bench/bench_run_startup.py``), and
a run, forked from the server, never scans the objects it shares with it (``gc.freeze``), so
its collector never writes to their pages (reference counts still do)."""
from .preload import TRAINING, import_frozen

import_frozen(TRAINING)
