"""Onboarding (door: :mod:`.service`): a project's own files read as hostile input
(:mod:`.reading`), what they say about its stack, commands, conventions and guardrails
(:mod:`.manifests` for the package manifests, :mod:`.texts` for the rest), drafted as typed memories
(:mod:`.drafts`) and filed as proposals a person or an agent approves.
"""
