"""The archive sweep (door: :mod:`.sweep`, ``store.archive``) and its singleton lock (:mod:`.lock`)."""
