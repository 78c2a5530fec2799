"""How reports show each shipped family: one module each, its ``REPORT`` and its page panels.

Found by family name through ``sortie.report.descriptor.REPORTS``; nothing here is imported
until a report of that family asks.
"""
