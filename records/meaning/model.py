"""The embedding model: wordllama's packaged static embeddings, loaded on first use.

The weights and the tokenizer ship inside the wordllama wheel; loading from the package's own
directory with downloads disabled means nothing is ever fetched at run time. numpy and
wordllama are imported only here and only when a vector is first needed, so starting the
server (stdio start-up is measured) does not pay for them.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    import numpy as np

MODEL_NAME = "wordllama-l2_supercat-256"
DIMENSIONS = 256
# A record is stored as two vectors side by side: its title alone, then its whole text (title
# and values). A question is compared with both and the nearer counts, so a record whose values
# drown its title's meaning is still found by the title (recall@10 on the labelled set, questions
# in other words: 20.9 % with the whole text alone, 24.8 % with the nearer of the two).
PARTS = ("title", "whole")
STORED_DIMENSIONS = DIMENSIONS * len(PARTS)
# Part of the model version: rows stored in another layout are outdated and embedded again.
LAYOUT = "title+whole"
# Characters of a record's text that are embedded: static embeddings average their tokens, so
# a long tail of values only blurs the title's meaning.
MAX_TEXT_CHARS = 2000

_lock = threading.Lock()
_model: Any = None


def enabled() -> bool:
    return bool(getattr(settings, "ANCHOR_MEANING", True))


def model_version() -> str:
    """The installed wordllama release and the stored layout: a change to either outdates a row."""
    return f"{version('wordllama')}/{LAYOUT}"


def _load() -> Any:
    global _model
    with _lock:
        if _model is None:
            # wordllama's inference module calls logging.basicConfig() on import; with a handler
            # on the root logger for the duration that call leaves the process's logging alone.
            root = logging.getLogger()
            guard = logging.NullHandler()
            root.addHandler(guard)
            try:
                from wordllama import WordLlama
            finally:
                root.removeHandler(guard)
            spec = importlib.util.find_spec("wordllama")
            assert spec is not None and spec.origin is not None
            _model = WordLlama.load(
                config="l2_supercat",
                dim=DIMENSIONS,
                cache_dir=Path(spec.origin).parent,
                disable_download=True,
            )
        return _model


# The last few small batches embedded, by their exact texts: a write's preview (prepare's dry
# run) embeds the record it would write, so its commit finds the vectors here instead of
# calling the model while it holds the write's locks. Keyed by the whole batch, so a hit is
# exactly what the model returned for the same call.
RECENT_BATCHES = 64
RECENT_BATCH_TEXTS = 8


def embed_texts(texts: list[str]) -> np.ndarray:
    """Unit vectors (float32, one row per text); an empty text gives a zero row."""
    import numpy as np

    model = _load()
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    key = tuple(text[:MAX_TEXT_CHARS] for text in texts)
    if len(key) <= RECENT_BATCH_TEXTS:
        return _embed_recent(key).copy()  # a copy: callers may scale the rows in place
    return _embed(model, key)


@lru_cache(maxsize=RECENT_BATCHES)
def _embed_recent(texts: tuple[str, ...]) -> np.ndarray:
    return _embed(_load(), texts)


def _embed(model: Any, texts: tuple[str, ...]) -> np.ndarray:
    import numpy as np

    vectors = np.asarray(model.embed(list(texts)), np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
