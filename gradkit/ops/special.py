"""Special functions written on the array module alone (no SciPy needed)."""
from __future__ import annotations


def erf_array(xp, x):
    """The error function on raw arrays of module xp.

    Placeholder accuracy ~1e-7 (Abramowitz & Stegun 7.1.26).
    """
    s = xp.sign(x)
    a = xp.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * xp.exp(-a * a)
    return (s * y).astype(x.dtype, copy=False)
