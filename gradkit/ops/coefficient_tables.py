"""Coefficient tables of torch's CPU kernels for the special functions (ATen/native/Math.h, from
the Cephes Math Library), kept as data in ``coefficient_tables.json`` (each float written exactly):

- Chebyshev series and polynomials, highest order first as Cephes stores them, for
  ``special_series.py`` and ``bessel.py``;
- ``TEMME_D``, the coefficients d[k][n] of Temme's uniform asymptotic expansion of the incomplete
  gamma function (Cephes' igam.c), for ``incomplete_gamma.py``.
"""
import json
from importlib import resources


def _as_tuples(value):
    return tuple(map(_as_tuples, value)) if isinstance(value, list) else value


_TABLES = json.loads(resources.files(__package__).joinpath("coefficient_tables.json").read_text())
globals().update({name: _as_tuples(values) for name, values in _TABLES.items()})
__all__ = sorted(_TABLES)
