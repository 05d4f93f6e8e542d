"""Images in the browser composer: a pasted and a dropped image show as thumbnails with a remove
button, the message goes out with the ones kept, the model gets them, and the transcript shows
them from the server's image route."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.browser_support import XumServer, open_workspace, screenshot
from tests.support.images import png
from xum.testing.fakellm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

PASTED = png(12, 8)
DROPPED = png(9, 9, padding=64)

# A paste and a drop as the browser delivers them: a DataTransfer holding a File.
EVENT_JS = """
([kind, name, bytes]) => {
  const file = new File([new Uint8Array(bytes)], name, { type: "image/png" });
  const data = new DataTransfer();
  data.items.add(file);
  if (kind === "paste") {
    const box = document.querySelector("textarea[data-composer]");
    box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  } else {
    const target = document.querySelector(".composer");
    target.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
  }
}
"""


def poll(check: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def thumbs(page: Any) -> Any:
    return page.locator(".attached-image img")


def test_paste_and_drop_images_then_send(
    page: Any, xum_web: XumServer, fake_model: FakeLLM
) -> None:
    ws = xum_web.create_workspace("images")
    page.reload()
    open_workspace(page, ws["id"])
    page.evaluate(EVENT_JS, ["paste", "pasted.png", list(PASTED)])
    page.evaluate(EVENT_JS, ["drop", "dropped.png", list(DROPPED)])
    poll(lambda: thumbs(page).count() == 2, "two thumbnails")
    screenshot(page, "composer-images-1280")
    page.get_by_role("button", name="Remove dropped.png").click()
    poll(lambda: thumbs(page).count() == 1, "one thumbnail left")

    before = len(fake_model.requests)
    box = page.locator("textarea[data-composer]")
    box.fill("what is in this picture")
    box.press("Enter")
    shown = page.locator("[data-role='user'] img.image-thumb")
    shown.wait_for()
    assert thumbs(page).count() == 0  # sent: the composer is empty again
    poll(
        lambda: shown.evaluate("img => img.complete && img.naturalWidth === 12"),
        "the thumbnail to load from the server",
    )
    src = shown.get_attribute("src")
    assert src is not None and src.startswith(f"/api/workspaces/{ws['id']}/images/")

    def sent_image() -> bool:
        for request in fake_model.requests[before:]:
            for message in (request.json or {}).get("messages", []):
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if block.get("type") == "image":
                        return bool(block["source"]["data"] == base64.b64encode(PASTED).decode())
        return False

    poll(sent_image, "the model to get the pasted image")


def test_a_file_that_is_not_an_image_is_refused(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("not-images")
    page.reload()
    open_workspace(page, ws["id"])
    page.evaluate(
        """() => {
          const file = new File(["<svg xmlns='http://www.w3.org/2000/svg'/>"], "logo.svg", { type: "image/svg+xml" });
          const data = new DataTransfer();
          data.items.add(file);
          const box = document.querySelector("textarea[data-composer]");
          box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
        }"""
    )
    alert = page.locator(".composer [role='alert']")
    alert.wait_for()
    assert "not a PNG, JPEG, GIF or WebP" in alert.inner_text()
    assert thumbs(page).count() == 0
