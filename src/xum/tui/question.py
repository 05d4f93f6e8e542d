"""The agent's questions (`ask_user_question`), answered in place above the composer.

One block per question: its options (one to pick, or several for a multi-select question) and
an "Other" field for an answer in one's own words, which wins over a picked option (for a
multi-select question it is added to the picked ones). Ctrl+S submits the answers, keyed by
question text as the tool expects; sending a chat message instead dismisses the questions (the
agent is told the user did not answer), as in the browser.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Input, RadioButton, RadioSet, SelectionList, Static, TextArea

from xum.engine.display import strip_controls

if TYPE_CHECKING:
    from xum.tools.base import Question


class QuestionPanel(VerticalScroll):
    # A share of the terminal's height (`vh`), not of the slot the panel sits in (which is as
    # tall as the panel: `%` cut its bottom off); what does not fit scrolls, and a focused
    # field is scrolled into view.
    DEFAULT_CSS = """
    QuestionPanel { height: auto; max-height: 60vh; border: round $warning; padding: 0 1; }
    QuestionPanel .q { text-style: bold; margin-top: 1; }
    QuestionPanel .hint { color: $text-muted; }
    QuestionPanel RadioSet, QuestionPanel SelectionList { height: auto; border: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Submit answers", priority=True)
    ]
    can_focus = False  # Tab goes from field to field, not to the panel itself

    class Answered(Message):
        def __init__(self, panel: QuestionPanel, answers: dict[str, str]) -> None:
            super().__init__()
            self.panel = panel
            self.answers = answers

    def __init__(self, questions: Sequence[Question]) -> None:
        super().__init__(id="questions")
        self.questions = list(questions)

    def compose(self) -> ComposeResult:
        yield Static(Text("The agent asks:", style="bold"))
        for i, q in enumerate(self.questions):
            head = Text(f"{strip_controls(q.header)}: ", style="bold")
            head.append(strip_controls(q.question))
            yield Static(head, classes="q")
            if q.multi_select:
                yield SelectionList[int](
                    *[(self._label(o.label, o.description), n) for n, o in enumerate(q.options)],
                    id=f"q{i}",
                )
            else:
                with RadioSet(id=f"q{i}"):
                    for o in q.options:
                        yield RadioButton(self._label(o.label, o.description))
            yield Input(placeholder="Other: your own answer", id=f"other{i}")
        yield Static(
            "Ctrl+S submits · Tab moves between fields · a chat message instead dismisses them",
            classes="hint",
        )

    @staticmethod
    def _label(label: str, description: str) -> Text:
        text = Text(strip_controls(label))
        if description:
            text.append(" — " + strip_controls(description), style="dim")
        return text

    def on_mount(self) -> None:
        # The first question takes the focus, unless a message is being written: the panel
        # is on screen above the composer, and Shift+Tab reaches it.
        composer = self.app.focused
        if not (isinstance(composer, TextArea) and composer.text.strip()):
            self.query(f"#q{0}").first().focus()

    def answers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for i, q in enumerate(self.questions):
            other = self.query_one(f"#other{i}", Input).value.strip()
            picked: list[str] = []
            if q.multi_select:
                chosen = self.query_one(f"#q{i}", SelectionList).selected
                picked = [q.options[n].label for n in sorted(chosen)]
            else:
                index = self.query_one(f"#q{i}", RadioSet).pressed_index
                if index >= 0 and not other:
                    picked = [q.options[index].label]
            if other:
                picked.append(other)
            if picked:
                out[q.question] = ", ".join(picked)
        return out

    def action_submit(self) -> None:
        answers = self.answers()
        if not answers:
            self.notify("pick an option or write an answer first", severity="warning", markup=False)
            return
        self.post_message(self.Answered(self, answers))
