"""`make loadtest`: the portal scaled out behind nginx, under simulated learners and staff.

See bench/README.md. `python -m bench.loadtest --help` lists the size and duration options.
"""
