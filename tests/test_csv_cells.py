"""One CSV cell at a time: what a spreadsheet would run is neutralised, other text is kept."""

import pytest

from kit.csv_export import spreadsheet_safe


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("=1+1", "'=1+1"),
        ("a;=cmd|' /C calc'!A0", "a;'=cmd|' /C calc'!A0"),  # a new cell where ";" splits
        ("a\t@SUM(1)", "a\t'@SUM(1)"),
        ("first line\n-2+3", "first line\n'-2+3"),
    ],
)
def test_a_sign_that_would_start_a_formula_in_some_locale_is_neutralised(text, written):
    assert spreadsheet_safe(text) == written


@pytest.mark.parametrize("text", ["Smith, -", "Year 7, +1 on last term", "Lee-Smith", "a@b.org"])
def test_text_no_reader_would_split_before_a_sign_is_written_as_it_is(text):
    # Only a comma-splitting reader splits at a comma, and it keeps the quoted cell whole.
    assert spreadsheet_safe(text) == text
