"""`make bench`: the portal measured at scale on PostgreSQL (not part of `make test`)."""
