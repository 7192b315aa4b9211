"""Developer tools over the product: benchmarks and the scripted walkthrough."""
