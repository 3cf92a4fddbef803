"""The student-data and privacy side: the access log of student data, what the host keeps of a
student (:mod:`.records`), the export of it, the connected apps and feeds, and the privacy
commands. Above OAuth and MCP, whose tables it reads (docs/privacy.md points here).
"""
