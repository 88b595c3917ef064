"""The claimed workspace (door: :mod:`.service`): its time
tracking (:mod:`.session_time`) and its dump to a daily file (:mod:`.dump`).
"""
