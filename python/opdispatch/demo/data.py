"""The demo's data: scikit-learn's handwritten digits (1,797 8x8 images, 10
classes), split 80/20 (stratified, seeded) into training and held-out sets,
and seeded mini-batches as opdispatch tensors."""
from __future__ import annotations

import dataclasses
from typing import Iterator

import numpy as np

from .. import _C
from .._tensor import Tensor

INSTALL_HINT = 'the demo needs scikit-learn (for its digits data set): pip install "opdispatch[demo]"'


@dataclasses.dataclass(frozen=True)
class Digits:
    """Pixels scaled to [0, 1] (float32, (N, 64)) and labels (int64, (N,))."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def n_features(self) -> int:
        n: int = self.x_train.shape[1]
        return n

    @property
    def n_classes(self) -> int:
        return int(self.y_train.max()) + 1


def load_digits(seed: int, test_fraction: float = 0.2) -> Digits:
    """The digits split into training and held-out sets with the class
    proportions of the whole set; the same ``seed`` gives the same split.
    Raises ImportError (with the install command) without scikit-learn."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
        from sklearn.model_selection import train_test_split
    except ImportError as e:
        raise ImportError(INSTALL_HINT) from e
    images, labels = sklearn_digits(return_X_y=True)
    x = (images / 16.0).astype(np.float32)  # the pixels are 0..16
    x_train, x_test, y_train, y_test = train_test_split(
        x, labels.astype(np.int64), test_size=test_fraction, stratify=labels, random_state=seed
    )
    return Digits(x_train, y_train, x_test, y_test)


def batches(x: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator) -> Iterator[tuple[Tensor, Tensor]]:
    """Shuffled mini-batches ``(inputs, labels)``; the last one may be smaller."""
    order = rng.permutation(len(x))
    for start in range(0, len(x), batch_size):
        idx = order[start:start + batch_size]
        yield _C.from_numpy(x[idx]), _C.from_numpy(y[idx])


def n_batches(n: int, batch_size: int) -> int:
    return -(-n // batch_size)
