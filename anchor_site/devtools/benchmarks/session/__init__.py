"""Round trips over stdio on the long history, with a second server writing beside them."""
