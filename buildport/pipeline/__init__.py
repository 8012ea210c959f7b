"""The pipeline every command runs its files through.

- :mod:`~buildport.pipeline.discovery`: which files (build files below the paths given, the Makefiles they
  include), each read once;
- :mod:`~buildport.pipeline.port`: porting them, with the cache in front of the work and after it;
- :mod:`~buildport.pipeline.pool`: the worker processes every phase of a run shares;
- :mod:`~buildport.pipeline.outcomes`: what a run gives, one outcome per input;
- :mod:`~buildport.pipeline.write`: writing the results back.
"""
