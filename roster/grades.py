"""Which level a pupil's grade means: England's and the US's defaults, changeable per school.

A school's table is its `PartnerSettings.roster_grade_levels`, one `grade = level` per line
(the level as its code or its name: primary, secondary, further education); grades it does
not name take the defaults. A further-education college (`roster_further_education`) puts
every student in further education whatever the grade.
"""

from __future__ import annotations

from django.utils.translation import gettext as _

from partner_api.levels import Level

PRIMARY, SECONDARY = Level.PRIMARY.value, Level.SECONDARY.value
FURTHER = Level.FURTHER_EDUCATION.value

# OneRoster's grades are CEDS codes (PK, KG, 01-13, PS, UG, Other); English schools write their
# own ("R", "Y7" or "Year 7"). Reception to Year 6 are primary, Year 7 to Year 13 secondary;
# in the US, PK to 05 primary and 06 to 12 secondary.
DEFAULT_GRADE_LEVELS: dict[str, str] = {
    **{grade: PRIMARY for grade in ("PK", "KG", "TK", "R", "REC", "RECEPTION", "N", "NURSERY")},
    **{f"{number:02d}": PRIMARY for number in range(1, 6)},
    **{f"{number:02d}": SECONDARY for number in range(6, 14)},
    **{f"Y{number}": PRIMARY for number in range(1, 7)},
    **{f"YEAR {number}": PRIMARY for number in range(1, 7)},
    **{f"Y{number}": SECONDARY for number in range(7, 14)},
    **{f"YEAR {number}": SECONDARY for number in range(7, 14)},
    # Post-secondary and undergraduate (CEDS): a college's students. Grade 13 stays secondary:
    # in England, Year 13 is the sixth form's.
    "PS": FURTHER,
    "UG": FURTHER,
}


def grade_key(grade: str) -> str:
    """Return a grade as the table looks it up: upper case, single spaces, "Year7" as "YEAR 7"."""
    key = " ".join(grade.upper().split())
    if key.startswith("YEAR") and key[4:].strip().isdigit():
        key = f"YEAR {int(key[4:])}"
    elif key.startswith("Y") and key[1:].isdigit():
        key = f"Y{int(key[1:])}"
    elif key.isdigit():
        key = f"{int(key):02d}"
    return key


def level_spelled(value: str) -> str | None:
    """Return the level code a table's right-hand side names, or None."""
    wanted = " ".join(value.lower().split())
    for level in Level:
        if wanted in (level.value.lower(), str(level.label).lower()):
            return level.value
    aliases = {"primary": PRIMARY, "secondary": SECONDARY, "further education": FURTHER}
    return aliases.get(wanted)


def grade_table_parse(text: str) -> tuple[dict[str, str], list[str]]:
    """Return a school's own table from its text, and a sentence per line it cannot read."""
    table, errors = {}, []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        grade, sep, level = line.partition("=")
        code = level_spelled(level) if sep else None
        if not grade.strip() or code is None:
            errors.append(
                _(
                    "Line %(number)s (“%(line)s”) is not “grade = level”, with a level of "
                    "primary, secondary or further education."
                )
                % {"number": number, "line": line.strip()[:60]}
            )
            continue
        table[grade_key(grade)] = code
    return table, errors


def grade_level(
    grades: tuple[str, ...] | list[str], *, table: dict[str, str], further_education: bool = False
) -> str | None:
    """Return the level of a pupil's grades (the first one the tables know), else None."""
    if further_education:
        return FURTHER
    for grade in grades:
        key = grade_key(grade)
        if key in table:
            return table[key]
        if key in DEFAULT_GRADE_LEVELS:
            return DEFAULT_GRADE_LEVELS[key]
    return None
