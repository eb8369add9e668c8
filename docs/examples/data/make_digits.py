"""Write digits.npz: the 1,797 8x8 handwritten digits (UCI, as shipped by scikit-learn).

Run once by a maintainer; the committed digits.npz is what the examples read, so
scikit-learn is NOT a gradkit dependency (it was `pip install`ed locally only to
produce the file):

    pip install scikit-learn && python docs/examples/data/make_digits.py

Pixels are stored as uint8 in 0..16 (the original scale), labels as uint8 0..9.
"""
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

digits = load_digits()
out = Path(__file__).with_name("digits.npz")
np.savez_compressed(out, images=digits.images.astype(np.uint8),
                    labels=digits.target.astype(np.uint8))
print(f"wrote {out} ({out.stat().st_size} bytes, {len(digits.target)} images)")
