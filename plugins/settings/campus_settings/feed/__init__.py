"""The student's calendar as a subscribable feed (issue 12, point 7).

A secret per-student URL, ``/calendar/<token>.ics``, that any calendar app subscribes to: the
student's class meetings as weekly recurring events, finals, university events and friend
meetings, each with the settings the resolver gives it. ``tokens`` keeps the secret (only its
SHA-256), ``ics`` writes the calendar, ``routes`` serves it and the student's card.
"""
