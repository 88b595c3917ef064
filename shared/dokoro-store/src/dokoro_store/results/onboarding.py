"""Results of onboarding: what dokoro read of a project's own files and the typed memories it
proposes from them (``dokoro onboard``, ``dokoro_onboard``, the ``onboard-project`` prompt)."""

from __future__ import annotations

from pydantic import Field

from dokoro_store.results.base import Result

__all__ = ["Onboarding", "OnboardingDraft"]


class OnboardingDraft(Result):
    """One memory onboarding proposes: approve it as it is, or with a distilled text of your own."""

    topic: str = Field(description="about, stack, commands, conventions or guardrails")
    type: str = Field(description="The memory type it is written as (context, reference, best-practice, guardrail).")
    title: str
    body: str
    sources: list[str] = Field(description="The project's files it was read from (relative paths).")
    proposal: str | None = Field(default=None, description="The proposal that holds it (null in a preview).")
    status: str | None = Field(
        default=None, description="proposed, approved or rejected (a draft filed before keeps its decision)."
    )


class Onboarding(Result):
    """What onboarding read of the project, what it skipped and why, and what it proposes."""

    project: str = Field(description="The project's folder name (never its path).")
    name: str = Field(description="The project's name, as its manifests or README give it.")
    files: list[str] = Field(description="The files read (relative paths).")
    skipped: dict[str, str] = Field(description="Files left out, each with why (a symlink, too big, no parse).")
    drafts: list[OnboardingDraft]
    filed: int = Field(default=0, description="Proposals filed by this call (0 in a preview).")
    withdrawn: int = Field(
        default=0, description="Open proposals of an earlier reading withdrawn: the files now say otherwise."
    )
    preview: bool = Field(default=False, description="True when nothing was filed (a dry run, or the prompt).")
