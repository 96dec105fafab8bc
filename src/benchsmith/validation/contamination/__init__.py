"""Contamination: do a release's items appear in other releases, Hub datasets or text corpora?

``benchsmith contamination RELEASE --against SOURCE ...`` (:mod:`.cli`) and, inside
``validate``, the ``contamination`` check against the other releases of the registry and
the previous version (:mod:`.check`). Modules: :mod:`.words` (normalisation and words),
:mod:`.ngrams` (the index, matching a batch), :mod:`.corpus` (sources, partitions, streamed
readers), :mod:`.task` (one partition's scan: what a worker runs), :mod:`.scan` (local or Dask
execution, the report, the gate).

Decisions:

* **What is matched** comes from the release's typed policy
  (``Policy.contamination_fields``; default the text fields): XCOPA's premise and
  choices, ComVE's statements, CoGnition's English source, MuCoW's source sentences.
  Each value of those fields is matched on its own (an n-gram never spans two fields).
* **n.** Word 13-grams by default, lm-evaluation-harness' convention (from GPT-3's
  decontamination). Most challenge-set fields are shorter than 13 words (medians measured
  on the real releases: XCOPA's English premises 6 words and choices 5, 0.2 % of premises
  reach 13; ComVE's statements 7, 5 % reach 13; CoGnition's sources 8, 9 %; MuCoW's source
  sentences 16, 66 %), and a 13-gram of them would never exist; so a field shorter than n
  is matched *whole*: it counts when its every word appears, in order and contiguous, in
  one corpus line. Fields under ``--min-words`` (default 5) words are not matched ("He
  laughed." is in every corpus and says nothing about contamination); the report counts
  them as too short. So XCOPA's 6-word premise is matched as one 6-gram, a 4-word choice
  is not matched.
  ``--ngram 8`` (GPT-3's floor for short datasets) and any other n work the same way.
* **Normalisation**: NFKC, case folding, words without punctuation (the length
  statistics' tokeniser, :func:`benchsmith.nlp.scripts.word_pattern`); scripts
  without spaces (Chinese, Japanese, Thai ...) are one token per character, so a Chinese
  13-gram is 13 characters. One function, :func:`.words.tokenise`, serves the index and the
  corpus, vectorised over a batch (Arrow kernels and numpy over the UTF-8 bytes).
* **Exact, never a hash collision**: hashes find candidates, the words verify them.
* **Near duplicates** (``--near-dup J``, off by default): a corpus line whose character
  5-gram shingles have Jaccard >= J with a matched field (both as normalised words joined by
  spaces), found with the leakage check's MinHash LSH and verified on the exact Jaccard. It
  compares whole lines with whole fields, so it suits sentence-per-line corpora; n-grams
  find a field inside a long document.
* **Sources are untrusted**: regular files only (links are skipped, and a folder is never
  left through one), a Hub file is read from the download cache only, and a malformed line is
  a one-line error naming the file and line.
* **Per item**: which source, file and 1-based line (a parquet file's 0-based ``row``;
  another release's item ``id`` and field), the word offset and the matched words; at most 5 locations an item with the total count.
  **Per config and split**: items, contaminated items, the rate, per source.
* **Gate**: ``Policy.contamination_max_fraction`` per split (default: validation and test
  must be clean, train is reported only); overlaps with sources matching
  ``Policy.contamination_by_design`` (declared by the builder, e.g. XCOPA's ``en`` against
  COPA) are reported and never gated.
"""
