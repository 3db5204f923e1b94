"""The checks the Python package's test scripts share: one line per check
("ok ..." or "FAIL ..."), failures counted for the exit status."""

import numpy as np

import dat

failures = []


def report(ok, what):
    print("%s %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def close(got, want, rtol, atol):
    return got.shape == want.shape and bool(
        np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


def expect_error(what, fn, needle):
    try:
        fn()
    except (dat.DatError, TypeError) as e:
        print("  %s" % e)
        report(needle in str(e), what)
        return
    report(False, what + " (no error)")
