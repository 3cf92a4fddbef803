"""The student's pages on the host: the home page and dashboard (:mod:`.home`), the pages'
chrome that plugin pages share (:mod:`.chrome`: ``dashboard_page``), the activity page and the
access-token pages.
"""
