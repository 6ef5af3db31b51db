"""The teaching code: the explorers (:mod:`.widgets`, ipywidgets over the papers' formulas and the
saved runs; ``make explore`` serves them with Voila) and the exercises (:mod:`.exercises`, checks
that diagnose known mistakes).  Built on the science and the toolkit's results; neither imports it."""
