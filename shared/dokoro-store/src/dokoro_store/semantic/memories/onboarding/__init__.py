"""Onboarding (door: :mod:`.service`): a project's own files read as hostile input
(:mod:`.reading`), what they say about its stack, commands, conventions and guardrails
(:mod:`.findings`, gathered by :mod:`.manifests` from the package manifests and by :mod:`.texts`
from the rest), drafted as typed memories
(:mod:`.drafts`) and filed as proposals a person or an agent approves.
"""
