"""torch's checks of ``multinomial``'s arguments and probabilities, in its order."""
from __future__ import annotations

import numpy as np

from gradkit import backend
from gradkit.ops.unary_helpers import scalar_type_name


def checked_probabilities(data, num_samples: int, replacement: bool) -> np.ndarray:
    """``data`` (1-D or 2-D) as float64 rows on the CPU, after torch's checks: the fast path's
    whole-tensor check, or its kernel's entry-by-entry one when drawing several samples with
    replacement."""
    if data.ndim not in (1, 2):  # torch's checks, in its order
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if data.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(data)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > data.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if data.shape[-1] > 2 ** 24:  # torch draws category indices in float32
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = np.asarray(backend.to_device(data, backend.CPU), dtype=np.float64).reshape(
        -1, data.shape[-1])
    if replacement and num_samples > 1:
        _check_rows_one_by_one(rows)
    elif not np.isfinite(rows).all() or (rows < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.sum(-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return rows


def _check_rows_one_by_one(rows: np.ndarray) -> None:
    """torch's checks when drawing several samples with replacement (its CPU kernel): entry
    by entry (NaN fails ``>= 0`` first), then the row's sum, row after row."""
    with np.errstate(invalid="ignore"):
        bad_entries = ~(rows >= 0) | ~np.isfinite(rows)
        failing = bad_entries.any(-1) | ~(rows.sum(-1) > 0)
    if not failing.any():
        return
    row = int(np.argmax(failing))
    if not bad_entries[row].any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    value = rows[row, int(np.argmax(bad_entries[row]))]
    kind = "< 0" if not value >= 0 else "= infinity or NaN"
    raise RuntimeError(f"invalid multinomial distribution (encountering probability entry {kind})")
