"""What the cache keeps in the database while Redis cannot be reached (ops.cache)."""

from django.db import models


class CacheFallbackEntry(models.Model):
    """One cache key held in the database during a Redis outage: a count, a lock, a circuit.

    Counts sit in `number`, so that the database adds to them atomically (UPDATE ... SET number
    = number + 1); anything else is pickled in `value`, as Redis holds it.
    """

    cache_key = models.CharField(max_length=255, primary_key=True)
    value = models.BinaryField(null=True)
    number = models.BigIntegerField(null=True)
    # Seconds since the epoch, as Django's caches count them.
    expires = models.FloatField(db_index=True)

    class Meta:
        db_table = "ops_cache_fallback"
        verbose_name = "cache entry kept in the database"
        verbose_name_plural = "cache entries kept in the database"

    def __str__(self) -> str:
        return self.cache_key
