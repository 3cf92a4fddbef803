"""Background work: the scheduler (:mod:`.scheduler`), the leader election between processes,
the job records and the warm-ups a server process runs when it starts.
"""
