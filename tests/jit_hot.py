# jit_hot.py - Python for tests/92-jit.t (python3.12+ -X perf): leaf_py
# called through middle_py and outer_py, for SECONDS of CPU time.
import sys
import time


def leaf_py(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def middle_py(n):
    return leaf_py(n)


def outer_py(secs):
    end = time.process_time() + secs
    t = 0
    while time.process_time() < end:
        t += middle_py(20000)
    return t


print("done" if outer_py(float(sys.argv[1]) if len(sys.argv) > 1 else 2) else "zero")
