"""`python manage.py benchmark`: timed rows for every area an agent waits on, each beside a
reference measured in the same run, so ratios hold on a noisy machine. Areas are grouped by what
they measure (process/, names/, session/, store/, http_load.py, and the in-process workflow
areas here) over shared scaffolding: measure, data, server, profile and runner."""
