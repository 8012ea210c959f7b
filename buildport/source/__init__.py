"""CUDA sources: finding the ones a build uses, scanning them, running the conversion engine, fixing what it leaves."""
