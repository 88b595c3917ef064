"""Proposals, never silent changes (door: :mod:`.service`): where candidates come from
(:mod:`.proposers`) and the one writer of the proposals ledger (:mod:`.ledger`).
"""
