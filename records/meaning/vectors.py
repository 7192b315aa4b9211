"""Compact vectors: int8 with one scale per vector (stored, reranked) and sign bits (shortlist).

A unit vector v is stored as round(v / s) in int8 with s = max|v| / 127, so v ~ s * q. Cosine
similarity against a query is then s * (q . query): one int8 matrix product per scope. The
sign bits (48 bytes for 384 dimensions) shortlist a large scope by Hamming distance first.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def quantise(vector: Any) -> tuple[bytes, float]:
    """A float vector as (int8 bytes, scale)."""
    array = np.asarray(vector, dtype=np.float32)
    peak = float(np.abs(array).max()) if array.size else 0.0
    if peak == 0.0:
        return bytes(array.size), 0.0
    scale = peak / 127.0
    return np.clip(np.rint(array / scale), -127, 127).astype(np.int8).tobytes(), scale


def dequantise(data: bytes, scale: float) -> np.ndarray:
    return np.frombuffer(data, dtype=np.int8).astype(np.float32) * scale


def sign_bits(matrix: np.ndarray) -> np.ndarray:
    """Each row's signs packed into 64-bit words (1 for positive): 6 words for 384 dimensions."""
    packed = np.packbits(np.atleast_2d(matrix) > 0, axis=-1)
    return np.ascontiguousarray(packed).view(np.uint64)


def hamming(bits: np.ndarray, query_bits: np.ndarray) -> np.ndarray:
    """Differing sign bits between each row of `bits` and the one row of `query_bits`."""
    counts: np.ndarray = np.bitwise_count(np.bitwise_xor(bits, query_bits)).sum(
        axis=1, dtype=np.uint16
    )
    return counts
