"""ask_user_question: put up to four multiple-choice questions to the user (plan mode)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from xum.tools.base import Question, QuestionOption, Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput

MAX_QUESTIONS = 4
MIN_OPTIONS, MAX_OPTIONS = 2, 4

NO_USER = (
    "No user is attached to this session (it runs unattended), so nobody can answer. Do not "
    "ask again: proceed with your best judgement and state each assumption you make "
    "(in the plan, when you are planning)."
)


class OptionInput(ToolInput):
    label: str = Field(description="The option as the user will pick it (a few words).")
    description: str = Field(description="What choosing it means, in one sentence.")


class QuestionInput(ToolInput):
    question: str = Field(description="The full question.")
    header: str = Field(description="A short label for the question (2-3 words).")
    multiSelect: bool = Field(  # the documented (camelCase) parameter name
        description="true when several options may be chosen together."
    )
    options: list[OptionInput] = Field(
        description=f"{MIN_OPTIONS} to {MAX_OPTIONS} options. Do not add an 'Other' option: "
        "the user can always answer in their own words."
    )

    @field_validator("options")
    @classmethod
    def _option_count(cls, value: list[OptionInput]) -> list[OptionInput]:
        if not MIN_OPTIONS <= len(value) <= MAX_OPTIONS:
            raise ValueError(f"each question needs {MIN_OPTIONS} to {MAX_OPTIONS} options")
        return value


class AskUserQuestionInput(ToolInput):
    questions: list[QuestionInput] = Field(
        description=f"1 to {MAX_QUESTIONS} questions, asked together."
    )

    @field_validator("questions")
    @classmethod
    def _question_count(cls, value: list[QuestionInput]) -> list[QuestionInput]:
        if not 1 <= len(value) <= MAX_QUESTIONS:
            raise ValueError(f"ask 1 to {MAX_QUESTIONS} questions at a time")
        texts = [q.question.strip() for q in value]
        if len(set(texts)) != len(texts):
            raise ValueError("each question must be different")
        return value


class AskUserQuestionTool(Tool):
    name = "ask_user_question"
    description = (
        "Ask the user up to 4 multiple-choice questions at once and wait for the answers. Use it "
        "only for decisions that depend on the user's preferences or on facts you cannot find "
        "out, never to confirm what you would recommend anyway. Give each question 2 to 4 "
        "genuinely different options; the user can also answer in their own words."
    )
    Input: ClassVar[type[ToolInput]] = AskUserQuestionInput
    read_only = False

    def summary(self, args: AskUserQuestionInput) -> str:
        return f"{len(args.questions)} question(s)"

    async def run(self, args: AskUserQuestionInput, ctx: ToolContext) -> ToolResult:
        questions = [
            Question(
                question=q.question.strip(),
                header=q.header.strip(),
                multi_select=q.multiSelect,
                options=tuple(
                    QuestionOption(o.label.strip(), o.description.strip()) for o in q.options
                ),
            )
            for q in args.questions
        ]
        asked = [q.question for q in questions]
        if ctx.ask_user is None:
            return ToolResult(output=NO_USER, meta={"questions": asked, "answered": False})
        answers = await ctx.ask_user(questions)
        if answers is None:
            return ToolResult(
                output=(
                    "The user did not answer these questions (they may have replied in the chat "
                    "instead). Carry on with your best judgement and state your assumptions."
                ),
                meta={"questions": asked, "answered": False},
            )
        lines = []
        for question in questions:
            answer = answers.get(question.question)
            shown = answer.strip() if isinstance(answer, str) and answer.strip() else "(no answer)"
            lines.append(f"Q: {question.question}\nA: {shown}")
        if not lines:
            return error("no answers came back")
        return ToolResult(
            output="The user answered:\n\n" + "\n\n".join(lines),
            meta={"questions": asked, "answered": True, "answers": dict(answers)},
        )
