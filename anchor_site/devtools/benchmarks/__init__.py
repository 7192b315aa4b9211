"""`python manage.py benchmark`: timed rows for every area an agent waits on, one module each.

Every row is measured beside a reference taken in the same run (a slower design, a floor, or the
same server doing less), so ratios hold on a noisy machine even when absolute figures drift.
"""
