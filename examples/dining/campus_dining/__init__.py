"""Example third-party plugin: dining hall hours."""
