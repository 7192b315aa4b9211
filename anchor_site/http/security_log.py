"""Log filters for Django's security loggers: a refused request is a line, not a traceback."""

from __future__ import annotations

import logging


class OneLineWarning(logging.Filter):
    """Turns a record into a WARNING without its traceback (the message says what happened)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not logging.getLogger().isEnabledFor(logging.WARNING):
            return False  # the level asked for is above warnings
        record.levelno = logging.WARNING
        record.levelname = logging.getLevelName(logging.WARNING)
        record.exc_info = None
        record.exc_text = None
        return True
