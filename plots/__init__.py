"""parbench's charts and offline report (plots/plot), the comparator's and
the trends' charts, and terminal tables. The data comes through the loader
of the regression engine (regress.results)."""
