"""Search by meaning: the embedding model, the stored vectors and a scope's in-memory index.

`model` loads the packaged model on first use (never at start-up) and turns text into unit
vectors; `vectors` packs them as int8 with a scale and as sign bits; `embeddings` writes a
record's embedding inside the writing transaction and catches up the ones a bulk write left
missing or outdated; `index` keeps each workspace's vectors in memory and finds the nearest.
Only the store's models are imported here, so services and selectors can both use it.
"""

import os

# One BLAS thread: a scope's scoring is one matrix-vector product, memory-bound and done in a
# millisecond on one core, and OpenBLAS's thread pool only contends with the server's own
# threads (measured 37 ms instead of 5 ms on a busy two-core machine). Set before numpy is
# first imported, which happens only in this package's modules, and only on first use.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
