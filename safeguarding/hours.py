"""School hours: when an unacknowledged alert escalates, and what a pupil is told."""

from datetime import datetime, time, timedelta

from django.utils import timezone

# Monday to Friday (the partner sets the times of day; PartnerSettings).
SCHOOL_DAYS = frozenset(range(5))


def school_deadline(start: datetime, minutes: int, *, opens: time, closes: time) -> datetime:
    """Return the moment `minutes` of school time have passed since `start`.

    Time outside school hours (evenings, weekends) does not count: an alert raised at 15:50
    with 30 minutes to go escalates at 08:50 the next school day, not at 16:20.
    """
    if closes <= opens:
        # A mistyped school day: count plain minutes rather than never escalating.
        return start + timedelta(minutes=minutes)
    moment = timezone.localtime(start)
    remaining = timedelta(minutes=minutes)
    while True:
        day_opens = moment.replace(hour=opens.hour, minute=opens.minute, second=0, microsecond=0)
        day_closes = moment.replace(hour=closes.hour, minute=closes.minute, second=0, microsecond=0)
        if moment.weekday() in SCHOOL_DAYS and moment < day_closes:
            moment = max(moment, day_opens)
            available = day_closes - moment
            if remaining <= available:
                return timezone.localtime(moment + remaining)
            remaining -= available
        # On to the start of the next day (re-localised: a clock change may fall between).
        next_day = (moment + timedelta(days=1)).date()
        moment = timezone.make_aware(datetime.combine(next_day, time(0)))


def in_school_hours(moment: datetime, *, opens: time, closes: time) -> bool:
    """Return whether a moment falls within school hours."""
    local = timezone.localtime(moment)
    return local.weekday() in SCHOOL_DAYS and opens <= local.time() < closes
