"""Dataset builders, one module or package per dataset (``benchsmith.builders.<name>``).

Every module here is imported by ``benchsmith.builder.discover()``; a package's
``cli`` submodule (evaluate / harvest / stage commands) is imported too.
"""
