"""OneRoster CSV file sets for the roster tests: the demo app's writer (demo.oneroster)."""

from demo.oneroster import (  # noqa: F401  (the names the roster tests use)
    FILES,
    STAMP,
    Klass,
    Pupil,
    RosterSpec,
    School,
    Teacher,
    Term,
    add_school,
    roster_write,
    school_spec,
    trust_spec,
)
