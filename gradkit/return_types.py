"""torch.return_types: the named tuples ops return (``max(x, dim)`` gives
``return_types.max(values=..., indices=...)``).

Each is a named tuple printed as torch prints its structseq, one field a line, and built either
from its fields (``max(values, indices)``) or, as torch's, from one sequence of them
(``max((values, indices))``).
"""
from __future__ import annotations

from collections import namedtuple


def _repr(self) -> str:
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"{__name__}.{type(self).__name__}(\n{fields})"


def _new(cls, *items):
    if len(items) == 1 and isinstance(items[0], (tuple, list)):  # torch's structseq((a, b))
        items = tuple(items[0])
    if len(items) != len(cls._fields):
        raise TypeError(f"{__name__}.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                        f"({len(items)}-sequence given)")
    return tuple.__new__(cls, items)


def _return_type(name: str, fields: str) -> type:
    """A named tuple class ``name`` with ``fields`` (space-separated), torch's way."""
    base = namedtuple(name, fields)
    count = len(base._fields)
    return type(name, (base,), {"__slots__": (), "__module__": __name__, "__repr__": _repr,
                                "__new__": _new, "n_fields": count,
                                "n_sequence_fields": count, "n_unnamed_fields": 0})


_FIELDS = {
    "aminmax": "min max", "cummax": "values indices", "cummin": "values indices",
    "frexp": "mantissa exponent", "geqrf": "a tau", "histogram": "hist bin_edges",
    "histogramdd": "hist bin_edges", "kthvalue": "values indices",
    "linalg_cholesky_ex": "L info", "linalg_eig": "eigenvalues eigenvectors",
    "linalg_eigh": "eigenvalues eigenvectors", "linalg_inv_ex": "inverse info",
    "linalg_ldl_factor": "LD pivots", "linalg_ldl_factor_ex": "LD pivots info",
    "linalg_lstsq": "solution residuals rank singular_values", "linalg_lu": "P L U",
    "linalg_lu_factor": "LU pivots", "linalg_lu_factor_ex": "LU pivots info",
    "linalg_qr": "Q R", "linalg_slogdet": "sign logabsdet", "linalg_solve_ex": "result info",
    "linalg_svd": "U S Vh", "lu_unpack": "P L U", "max": "values indices",
    "median": "values indices", "min": "values indices", "mode": "values indices",
    "nanmedian": "values indices", "qr": "Q R", "slogdet": "sign logabsdet",
    "sort": "values indices", "svd": "U S V", "topk": "values indices",
    "triangular_solve": "solution cloned_coefficient",
}
globals().update({name: _return_type(name, fields) for name, fields in _FIELDS.items()})
__all__ = sorted(_FIELDS)
