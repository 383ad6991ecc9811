"""The spec's level codes, one per stage of education."""

from django.db import models
from django.utils.translation import gettext_lazy


class Level(models.TextChoices):
    """The spec's level codes, passed upstream as the `level` query parameter."""

    FURTHER_EDUCATION = "LOA_PARTNER_LEVEL1", gettext_lazy("Further education")
    SECONDARY = "LOA_PARTNER_LEVEL2", gettext_lazy("Secondary")
    PRIMARY = "LOA_PARTNER_LEVEL3", gettext_lazy("Primary")
