"""Settings → Models in the browser against a real `xum server`: a custom model added from the
provider's catalog with the keyboard, the default model, manual entry when listing fails, and the
added model in the model picker and the Ctrl+/ cycle."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser_support import (
    XumServer,
    browser_fake,
    fake_env,
    open_new_workspace,
    screenshot,
    serving,
)
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

LAB_KEY = "lab-browser-key-0123456789"
LISTED = ["qwen3-coder-next", "llama-4-scout", "gpt-oss-120b"]
PROVIDERS = """// My providers (keep this note).
{
  "lab": {
    "providerType": "openai-compatible",
    "displayName": "Lab",
    "baseUrl": "%s",
    "apiKey": "%s",
    "models": ["qwen"], // the first one
  },
}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[XumServer, FakeLLM]]:
    """A server of its own: this module edits providers.jsonc and config.json."""
    with browser_fake(models=LISTED) as fake:
        base = tmp_path_factory.mktemp("custom-models")
        root = base / "home" / ".xum"
        root.mkdir(parents=True)
        (root / "providers.jsonc").write_text(PROVIDERS % (fake.base_url(), LAB_KEY))
        (root / "providers.jsonc").chmod(0o600)
        with serving(base, fake_env(fake)) as server:
            yield server, fake


def test_add_a_suggested_model_with_the_keyboard(
    browser_context: Any, lab: tuple[XumServer, FakeLLM]
) -> None:
    server, fake = lab
    page, ws, errors = open_new_workspace(browser_context, server, "custom-models")

    page.keyboard.press("Control+Comma")
    settings = page.get_by_role("dialog", name="Settings")
    section = settings.get_by_test_id("custom-models")
    section.get_by_label("Provider").select_option("lab")
    field = section.get_by_role("combobox", name="Model ID")
    field.focus()  # opening the field asks the provider's catalog
    suggestions = section.get_by_role("listbox", name="Suggestions")
    suggestions.get_by_role("option").first.wait_for()
    assert suggestions.get_by_role("option").all_inner_texts() == LISTED
    (listing,) = [r for r in fake.requests if r.path == "/v1/models"]
    assert listing.headers["authorization"] == f"Bearer {LAB_KEY}"
    assert "qwen3-coder-next" not in (server.root / "providers.jsonc").read_text()  # only suggested

    field.press_sequentially("coder")
    wait_until(page, "() => document.querySelectorAll('[data-suggestion]').length === 1")
    field.press("ArrowDown")
    assert suggestions.get_by_role("option", selected=True).inner_text() == "qwen3-coder-next"
    screenshot(page, "settings-custom-models-1280")
    field.press("Enter")
    section.locator("[data-custom-model='lab:qwen3-coder-next']").wait_for()
    assert "Added lab:qwen3-coder-next." in section.get_by_role("status").inner_text()
    assert field.input_value() == ""
    text = (server.root / "providers.jsonc").read_text()
    assert '"models": ["qwen", "qwen3-coder-next"], // the first one' in text
    assert text.startswith("// My providers (keep this note).\n")
    assert LAB_KEY not in settings.inner_text()

    # Listing fails for a provider without a key; a typed id is still added with Enter.
    section.get_by_label("Provider").select_option("openai")
    field.click()
    failed = section.get_by_text("listing failed:")
    failed.wait_for()
    assert "OPENAI_API_KEY" in failed.inner_text()
    field.press_sequentially("ft:team-model")
    field.press("Enter")
    section.locator("[data-custom-model='openai:ft:team-model']").wait_for()

    # The default model for `xum run` and new workspaces.
    settings.get_by_label("Default model").select_option("lab:qwen3-coder-next")
    deadline = time.monotonic() + 15
    while server.api("GET", "/api/settings/models")["configuredDefaultModel"] is None:
        assert time.monotonic() < deadline, "the default model was not saved"
        time.sleep(0.05)
    assert server.api("GET", "/api/settings/models")["defaultModel"] == "lab:qwen3-coder-next"
    field.press("Escape")  # closes the list first
    page.keyboard.press("Escape")
    settings.wait_for(state="detached")

    # The added model is in the picker; Ctrl+/ cycles onto it from the one before it.
    page.locator("button[aria-label^='Model:']").click()
    picker = page.get_by_role("dialog", name="Models")
    picker.get_by_role("option").filter(has_text="lab:qwen3-coder-next").wait_for()
    picker.get_by_role("option").filter(has=page.get_by_text("lab:qwen", exact=True)).click()
    page.wait_for_selector("[data-model='lab:qwen']")
    page.locator("textarea[data-composer]").focus()
    page.keyboard.press("Control+/")
    page.wait_for_selector("[data-model='lab:qwen3-coder-next']")
    assert server.api("GET", f"/api/workspaces/{ws['id']}")["model"] == "lab:qwen3-coder-next"
    assert not errors, errors
