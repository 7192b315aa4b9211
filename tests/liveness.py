"""Bounds for the tests that time a reply or an exit.

Those tests tell "answered promptly" from "stuck": behind a lock (the 60 s busy timeout), a
blocked thread or a stalled body, which wait tens of seconds or for ever. How fast it really is
on a quiet machine is a benchmark figure (`manage.py benchmark`, area `startup`), not a test.
The bounds leave room for a shared, loaded machine, so load alone cannot fail a run, and stay
far below any of the waits they exist to catch.
"""

# Stopping mid-call: under half a second on a quiet machine; the failure waits out a lock.
PROMPT_EXIT_S = 5.0

# A reply that must not wait for a lock, a thread or a slow client: a few ms when quiet.
PROMPT_REPLY_S = 3.0
