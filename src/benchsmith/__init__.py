"""benchsmith: build, audit and release NLP challenge sets.

The data path: raw sources -> builder -> release directory ->
``datasets.load_dataset(<release dir>, <config>)`` -> validation -> publish.
"""

__version__ = "0.1.0"
