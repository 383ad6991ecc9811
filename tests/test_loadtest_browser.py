"""The load test's asyncio browser reads what nginx sends: sized, chunked, cookies, redirects."""

from __future__ import annotations

import asyncio

from bench.loadtest.browser import Browser, Recorder

PARTS = (b"<p>one ", b'<input name="csrfmiddlewa', b'retoken" value="t0k">')
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n"
    b"Set-Cookie: sessionid=abc123; HttpOnly; Path=/\r\n\r\n"
    + b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in PARTS)
    + b"0\r\n\r\n"
)
REDIRECT = b"HTTP/1.1 302 Found\r\nLocation: /me/\r\nContent-Length: 0\r\n\r\n"
SIZED = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"


def test_the_browser_reads_chunked_and_sized_answers_keeps_cookies_and_follows() -> None:
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # One keep-alive connection: every answer goes back on it, in turn.
        for answer in (CHUNKED, REDIRECT, SIZED):
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head)
            if head.startswith(b"POST"):
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
            writer.write(answer)
            await writer.drain()
        writer.close()

    async def visit() -> tuple:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        recorder = Recorder()
        browser = Browser("127.0.0.1", port, recorder)
        form = await browser.get("/accounts/login/")
        landed = await browser.post(
            "/accounts/login/", {"csrfmiddlewaretoken": form.csrf()}, follow=True
        )
        browser.close()
        server.close()
        return form, landed, recorder.samples

    form, landed, samples = asyncio.run(visit())

    assert form.status == 200 and form.csrf() == "t0k"
    assert form.body == '<p>one <input name="csrfmiddlewaretoken" value="t0k">'
    assert landed.status == 200 and landed.path == "/me/" and landed.body == "hello"
    assert b"Cookie: sessionid=abc123" in seen[1] and b"Cookie: sessionid=abc123" in seen[2]
    assert [(s.page, s.status, s.error) for s in samples] == [
        ("sign-in page", 200, None),
        ("sign in (password check)", 302, None),
        ("my assessments", 200, None),
    ]
