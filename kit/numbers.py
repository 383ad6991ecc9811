"""How a number reads on every page of the portal: one way, for learners and staff alike."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from django.utils.formats import number_format

HUNDREDTHS = Decimal("0.01")


def number_text(value: Decimal | float | int | None) -> str:
    """Return a number in the locale's notation: grouped, at most two decimals, no trailing zeros.

    In English: 50, 45.45, 45.5, 0.1, 1,234.5. The upstream sends scores with up to four
    decimals (100.0000); nobody reads a score to more than two, and rounding half up is what a
    reader expects (45.455 reads 45.46).
    """
    if value is None or isinstance(value, bool):
        return ""
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
        if not number.is_finite():
            return str(value)
        rounded = number.quantize(HUNDREDTHS, rounding=ROUND_HALF_UP)
    except (InvalidOperation, ValueError):
        return str(value)
    # normalize() drops the trailing zeros (and may write 100 as 1E+2); adding 0 brings the
    # exponent back to whole units and turns -0 into 0.
    return number_format(rounded.normalize() + 0, force_grouping=True)
