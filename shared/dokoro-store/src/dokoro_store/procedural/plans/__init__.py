"""Plans (door: :mod:`.service`, ``store.plans``): their rules (:mod:`.rules`), as the store reads
them (:mod:`.views`), their mirror files (:mod:`.files`), archiving (:mod:`.archive`) and the
validation report (:mod:`.report`).
"""
