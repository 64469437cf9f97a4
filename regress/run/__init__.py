"""Layer 6, run: the one place that starts bench (launch), paired rounds,
the suite, the nightly, bisection and its evidence. Imports the layers below
it."""
