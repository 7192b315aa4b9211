"""Names: the similar-name rule, resolve_record over a large scope, import review."""
