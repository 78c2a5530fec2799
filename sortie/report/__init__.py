"""Reports that read the results store: plots, episode maps and clips, a static HTML site.

The site is written by ``sortie.report.site`` (``write_site``, ``write_portal``, ``Report``).
Nothing is imported here, so a run that only needs one part (its mistakes, its tables) does
not load the whole site and its plotting.
"""
