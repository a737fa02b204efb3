"""The reader: the one place that looks at what a user types.

    from pilot.reading import read, State
    r = read("what came out after ELMo?", State())
    r.act, r.anchor.text, r.direction          # "search", "ELMo", "successor"

A message is read once, in three layers, after the well-regarded readers (Rasa, semantic-router, spaCy's
EntityRuler, Duckling):

1. **Spans** (``spans.py``): one pass yields typed spans with offsets — ids, quoted titles, result numbers, periods
   from one time grammar (``timegrammar.py``, ``data/time.json``, tested against ``data/time_examples.jsonl``),
   venues, organisations, papers known by a name, paper types and export formats from one lexicon
   (``pilot/data/lexicon.json``, which the exports share), the field's terms (``data/terms.txt``), people's names.
   Longest match, then earliest.
2. **Acts** (``acts.py``): what the message asks for, from labelled example utterances (``data/exemplars.txt``)
   with the spans replaced by their slots, scored by MiniLM sentence vectors and character n-grams (the n-grams
   alone where torch is absent), voted with the cue lexicon (``data/cues.json``, ``cues.py``) for directions,
   changes to the list, commands and entity questions.
3. **One precedence** (``reader.py``, its docstring): hard spans, then the state (an answer only while a question
   is open, a refinement only while a list is on screen), then the classifier with a threshold and a margin —
   below them the reader **asks**, offering its two best readings.

**A misreading is fixed by a data row** — an example utterance, a lexicon entry, a cue phrase, a time-grammar row
— and a case in a reading set, never by a pattern for that sentence in code. The neutral format of the reading
cases (``neutral.py``) is how readings are measured: ``pilot eval reading``.
"""

import threading

from pilot.reading.model import Reading, State
from pilot.reading.reader import read

_WARM = threading.Event()


def warm() -> None:
    """Load what reading needs (the sentence model and the examples' vectors), so that the first message of a
    process is not the one that waits seconds for it — nor a turn whose clock counts the wait."""
    from pilot.reading.acts import classifier

    classifier().warm()
    _WARM.set()


def warmed() -> bool:
    """``warm`` has run in this process: nothing is left to load (checked without a thread or a lock)."""
    return _WARM.is_set()


__all__ = ["Reading", "State", "read", "warm", "warmed"]
