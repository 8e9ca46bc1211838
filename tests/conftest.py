import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tiny models train fastest on one thread; on a 2-core CI machine more threads only contend.
os.environ.setdefault("OMP_NUM_THREADS", "1")
