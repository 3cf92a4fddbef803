"""The Canvas family: what is due, what is missing, the student's grades and announcements from
their campus's Canvas LMS, through the student's own Canvas connection (OAuth2)."""
