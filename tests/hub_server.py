"""Kept for existing imports: the local Hub now ships as :mod:`benchsmith.testing.hub`."""

from benchsmith.testing.hub import GITATTRIBUTES, File, HubError, LocalHub, Repo, closed_port, go_online  # noqa: F401
