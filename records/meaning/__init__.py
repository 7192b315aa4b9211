"""Search by meaning: the embedding model, the stored vectors and a scope's in-memory index.

`model` loads the packaged model on first use (never at start-up) and turns text into unit
vectors; `vectors` packs them as int8 with a scale and as sign bits; `embeddings` writes a
record's embedding inside the writing transaction and catches up the ones a bulk write left
missing or outdated; `index` keeps each workspace's vectors in memory and finds the nearest.
Only the store's models are imported here, so services and selectors can both use it.
"""
