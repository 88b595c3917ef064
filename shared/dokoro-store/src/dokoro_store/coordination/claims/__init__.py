"""Advisory file claims (door: :mod:`.service`): leases on paths, and the paths themselves
(:mod:`.paths`: root-relative, normalised, compared case-insensitively).
"""
