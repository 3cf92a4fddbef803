"""The demo campus: a deterministic, believable catalog for trying the tools and for tests.

The loader is ``campus_catalog.demo.generate.load_demo_catalog``.
"""
