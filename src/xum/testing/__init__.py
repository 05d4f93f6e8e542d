"""Test support shipped with xum: `fakellm` (a scripted fake LLM server speaking the real wire
formats) and `pytest_plugin` (its `fake_llm` fixture)."""
