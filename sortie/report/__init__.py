"""Reports that read the results store: plots, episode maps and clips, a static HTML site."""

from sortie.report.site import Report, write_portal, write_site

__all__ = ["Report", "write_portal", "write_site"]
